"""The tool router's rules, one behaviour per test (the stateful test covers them in combination)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from xpeval.evals.runtime import ToolNotFoundError, ToolRegistry, ToolRouter, ToolRouterError


class Transfer(BaseModel):
    to: str
    cents: int


def wire_router(ttl: int | None = None) -> tuple[ToolRouter, list[Any]]:
    runs: list[Any] = []
    router = ToolRouter(approval_ttl_ms=ttl)

    def wire(args: Transfer) -> str:
        runs.append(args)
        return f"sent {args.cents} to {args.to}"

    router.register("wire", wire, requires_approval=True, input_model=Transfer)
    return router, runs


def outcomes(router: ToolRouter) -> list[tuple[str, str, int]]:
    return [(row.tool, row.outcome, row.at_ms) for row in router.audit_log()]


@pytest.mark.parametrize("value", [0, False, None, "", [], 0.0])
def test_a_handler_returning_a_falsy_value_succeeded(value: Any) -> None:
    router = ToolRouter()
    router.register("probe", lambda args: value)
    result = router.call("probe", {}, now_ms=1)
    assert result.ok and result.value is value and result.error is None


class Silent(Exception):
    def __str__(self) -> str:
        return ""


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (ValueError("boom"), "boom"),
        (ValueError(), "ValueError"),
        (Silent(), "Silent"),
        (KeyError("k"), "'k'"),
    ],
)
def test_a_raising_handler_is_an_error_value_with_its_message_or_type_name(
    exc: Exception, message: str
) -> None:
    router = ToolRouter()

    def flaky(args: Any) -> None:
        raise exc

    router.register("flaky", flaky)
    router.register("steady", lambda args: "fine")
    result = router.call("flaky", {}, now_ms=1)
    assert not result.ok and result.error == message
    assert router.call("steady", {}, now_ms=2).value == "fine", "one raising handler stopped the router"


def test_an_unknown_tool_is_an_error_value_and_is_audited() -> None:
    router = ToolRouter()
    result = router.call("search", {"q": "x"}, now_ms=7)
    assert not result.ok and result.error == "unknown tool: search"
    assert outcomes(router) == [("search", "unknown_tool", 7)]


def test_schema_invalid_arguments_do_not_reach_the_handler_and_are_audited() -> None:
    router, runs = wire_router()
    result = router.call("wire", {"to": "bob", "cents": "lots"}, now_ms=3)
    assert not result.ok and not result.pending
    assert result.error is not None and result.error.startswith("invalid arguments for wire: cents:")
    assert runs == [] and outcomes(router) == [("wire", "invalid_args", 3)]


def test_a_gated_call_is_pending_and_its_handler_does_not_run() -> None:
    router, runs = wire_router()
    result = router.call("wire", {"to": "bob", "cents": 5}, now_ms=1)
    assert result.pending and not result.ok and result.request_id
    assert runs == []


def test_identical_gated_calls_get_distinct_request_ids() -> None:
    router, runs = wire_router()
    first = router.call("wire", {"to": "bob", "cents": 5}, now_ms=1)
    second = router.call("wire", {"to": "bob", "cents": 5}, now_ms=1)
    assert first.request_id != second.request_id
    assert router.approve(first.request_id or "", now_ms=2).ok
    assert router.approve(second.request_id or "", now_ms=2).ok
    assert len(runs) == 2, "one approval covered two identical calls"


def test_approval_runs_the_arguments_bound_at_issue_time() -> None:
    router, runs = wire_router()
    args: dict[str, Any] = {"to": "bob", "cents": 5}
    request_id = router.call("wire", args, now_ms=1).request_id or ""
    args["to"], args["cents"] = "mallory", 10_000
    assert router.approve(request_id, approver="alice", now_ms=2).value == "sent 5 to bob"
    assert runs == [Transfer(to="bob", cents=5)]


def test_a_gated_call_appears_twice_in_the_audit_pending_then_approved() -> None:
    router, _ = wire_router()
    request_id = router.call("wire", {"to": "bob", "cents": 5}, now_ms=1_699_999_400_000).request_id or ""
    router.approve(request_id, approver="alice", now_ms=1_699_999_520_000)
    rows = router.audit_log()
    assert [(r.outcome, r.request_id, r.approver, r.at_ms) for r in rows] == [
        ("pending", request_id, None, 1_699_999_400_000),
        ("approved", request_id, "alice", 1_699_999_520_000),
    ]


def test_approving_a_spent_request_is_unknown_and_logs_nothing() -> None:
    router, runs = wire_router()
    request_id = router.call("wire", {"to": "bob", "cents": 5}, now_ms=1).request_id or ""
    assert router.approve(request_id, now_ms=2).ok
    rows_before = router.audit_log()
    again = router.approve(request_id, now_ms=3)
    assert not again.ok and again.error == f"unknown request: {request_id}"
    assert router.audit_log() == rows_before and len(runs) == 1


def test_an_approved_handler_that_raises_still_spends_the_request_and_logs_error() -> None:
    router = ToolRouter()

    def explode(args: Any) -> None:
        raise TimeoutError("gateway timed out")

    router.register("charge", explode, requires_approval=True)
    request_id = router.call("charge", {}, now_ms=1).request_id or ""
    result = router.approve(request_id, approver="alice", now_ms=2)
    assert not result.ok and result.error == "gateway timed out"
    assert router.approve(request_id, now_ms=3).error == f"unknown request: {request_id}"
    assert [(r.outcome, r.approver) for r in router.audit_log()] == [("pending", None), ("error", "alice")]


def test_denying_a_never_issued_id_is_unknown_request_not_denied() -> None:
    router, _ = wire_router()
    result = router.deny("req-made-up", approver="alice", now_ms=1)
    assert not result.denied and result.error == "unknown request: req-made-up"
    assert router.audit_log() == []


def test_a_denied_request_does_not_run_and_cannot_be_approved_afterwards() -> None:
    router, runs = wire_router()
    request_id = router.call("wire", {"to": "bob", "cents": 5}, now_ms=1).request_id or ""
    denied = router.deny(request_id, approver="bob", now_ms=2)
    assert denied.denied and not denied.ok and not denied.expired
    assert router.approve(request_id, now_ms=3).error == f"unknown request: {request_id}"
    assert runs == [] and [r.outcome for r in router.audit_log()] == ["pending", "denied"]


def test_an_expired_request_answers_expired_not_denied_and_is_logged_once() -> None:
    router, runs = wire_router(ttl=1_000)
    request_id = router.call("wire", {"to": "bob", "cents": 5}, now_ms=10_000).request_id or ""
    result = router.approve(request_id, approver="alice", now_ms=11_000)
    assert result.expired and not result.denied and not result.ok
    assert router.deny(request_id, now_ms=11_001).error == f"unknown request: {request_id}"
    assert runs == [] and [r.outcome for r in router.audit_log()] == ["pending", "expired"]


def test_a_request_decided_just_before_its_ttl_runs() -> None:
    router, runs = wire_router(ttl=1_000)
    request_id = router.call("wire", {"to": "bob", "cents": 5}, now_ms=10_000).request_id or ""
    assert router.approve(request_id, now_ms=10_999).ok and len(runs) == 1


def test_expire_sweeps_only_overdue_requests_each_logged_once() -> None:
    router, _ = wire_router(ttl=1_000)
    old = router.call("wire", {"to": "a", "cents": 1}, now_ms=0).request_id
    fresh = router.call("wire", {"to": "b", "cents": 1}, now_ms=900).request_id
    assert [r.request_id for r in router.expire(now_ms=1_000)] == [old]
    assert router.expire(now_ms=1_000) == []
    assert [p.request_id for p in router.pending()] == [fresh]


def test_without_a_ttl_nothing_expires() -> None:
    router, _ = wire_router(ttl=None)
    request_id = router.call("wire", {"to": "a", "cents": 1}, now_ms=0).request_id or ""
    assert router.expire(now_ms=10**15) == []
    assert router.approve(request_id, now_ms=10**15).ok


def test_the_wall_clock_is_used_only_when_no_time_is_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    import xpeval.evals.runtime.router as router_module

    monkeypatch.setattr(router_module, "wall_clock_ms", lambda: 42)
    router = ToolRouter()
    router.register("t", lambda args: 1)
    router.call("t", {})
    router.call("t", {}, now_ms=7)
    assert [r.at_ms for r in router.audit_log()] == [42, 7]


def test_an_async_handler_is_refused_with_a_clear_error_not_returned_as_a_coroutine() -> None:
    router = ToolRouter()

    async def fetch(args: Any) -> str:
        return "never"

    router.register("fetch", fetch)
    result = router.call("fetch", {}, now_ms=1)
    assert not result.ok and "synchronous" in (result.error or "")


@pytest.mark.parametrize("name", ["", "  "])
def test_a_blank_route_name_is_refused(name: str) -> None:
    with pytest.raises(ToolRouterError):
        ToolRouter().register(name, lambda args: None)


def test_a_duplicate_route_name_is_refused() -> None:
    router = ToolRouter()
    router.register("t", lambda args: 1)
    with pytest.raises(ToolRouterError, match="duplicate tool name: t"):
        router.register("t", lambda args: 2)


class Answer(BaseModel):
    text: str


def test_a_router_from_a_registry_validates_with_each_tools_input_model() -> None:
    registry = ToolRegistry()
    registry.register("answer_user", "Final answer", Answer, risk="terminal")
    registry.register("shout", "Upper-case", Answer, handler=lambda args: args.text.upper())
    router = ToolRouter.from_registry(registry)
    assert router.call("shout", '{"text": "hi"}', now_ms=1).value == "HI"
    assert router.call("answer_user", {"text": "done"}, now_ms=1).value == {"text": "done"}
    assert (
        router.call("answer_user", {}, now_ms=1).error
        == "invalid arguments for answer_user: text: Field required"
    )


def test_a_router_from_a_registry_refuses_to_gate_an_unregistered_tool() -> None:
    with pytest.raises(ToolNotFoundError, match="unknown tool: wire"):
        ToolRouter.from_registry(ToolRegistry(), requires_approval={"wire"})
