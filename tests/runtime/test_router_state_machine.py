"""Stateful property test of the tool router over register / call / approve / deny / expire.

A reference model predicts every answer and every audit row; the invariants of issue 3 are
checked after each step: no exception escapes, approvals are spent at most once, request ids
never repeat, the audit log is never rewritten, reordered or dropped, every attempt is in it,
a returned log edited by the caller does not change the router's, and with a small window and
a JSONL sink the sink holds every row.
"""

from __future__ import annotations

import copy
import io
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from pydantic import BaseModel

from xpeval.evals.runtime import AuditRow, ToolRouter, ToolRouterError, read_audit_jsonl

TTL_MS = 1_000
MIN_TOTAL_STEPS = 2_000


class Amount(BaseModel):
    n: int


class SilentError(Exception):
    def __str__(self) -> str:
        return ""


class BrokenStrError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ itself fails")


# (exception class, constructor args, the message the router must report)
RAISES: list[tuple[type[BaseException], tuple[Any, ...], str]] = [
    (ValueError, ("boom",), "boom"),
    (ValueError, (), "ValueError"),
    (RuntimeError, ("",), "RuntimeError"),
    (LookupError, ("   ",), "LookupError"),
    (SilentError, (), "SilentError"),
    (BrokenStrError, (), "BrokenStrError"),
    (KeyError, ("k",), "'k'"),
    (ZeroDivisionError, ("division by zero",), "division by zero"),
]
FALSY_AND_OTHER_VALUES: list[Any] = [0, False, None, "", [], {}, 0.0, "done", 7]


@dataclass(frozen=True)
class Behaviour:
    """What a registered handler does: return `value`, or raise `raises` (class, args, message)."""

    value: Any = None
    raises: tuple[type[BaseException], tuple[Any, ...], str] | None = None


behaviours = st.one_of(
    st.sampled_from(FALSY_AND_OTHER_VALUES).map(lambda v: Behaviour(value=v)),
    st.sampled_from(RAISES).map(lambda r: Behaviour(raises=r)),
)
names = st.one_of(
    st.sampled_from(
        ["lookup", "wire_money", "delete", "toString", "__proto__", "constructor", "__class__", ""]
    ),
    st.text(max_size=4),
)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4))


@dataclass(frozen=True)
class Args:
    """Arguments to pass, what a handler should receive, and whether each kind of route accepts them."""

    raw: Any
    plain: dict[str, Any] | None  # what a model-less route's handler receives; None: invalid
    amount: int | None  # Amount.n a model route's handler receives; None: invalid


def _dict_args(extra: dict[str, Any], n: int | None) -> Args:
    raw = dict(extra) if n is None else {**extra, "n": n}
    if n is None and "n" in raw:
        raw.pop("n")
    return Args(raw=raw, plain=copy.deepcopy(raw), amount=n)


arguments = st.one_of(
    st.builds(_dict_args, st.dictionaries(st.text(max_size=3), json_scalars, max_size=3), st.integers()),
    st.builds(_dict_args, st.dictionaries(st.text(max_size=3), json_scalars, max_size=3), st.none()),
    st.sampled_from(
        [
            Args(raw=None, plain={}, amount=None),
            Args(raw="", plain={}, amount=None),
            Args(raw='{"n": 3}', plain={"n": 3}, amount=3),
            Args(raw='{"n": "x"}', plain={"n": "x"}, amount=None),
            Args(raw="[1, 2]", plain=None, amount=None),
            Args(raw="{broken", plain=None, amount=None),
            Args(raw=[1], plain=None, amount=None),
            Args(raw=42, plain=None, amount=None),
        ]
    ),
)
approvers = st.one_of(st.none(), st.sampled_from(["alice", "bob"]))


@dataclass
class Route:
    behaviour: Behaviour
    gated: bool
    with_model: bool
    runs: list[Any] = field(default_factory=list)

    def handler(self, received: Any) -> Any:
        self.runs.append(
            received.model_dump() if isinstance(received, BaseModel) else copy.deepcopy(received)
        )
        if self.behaviour.raises is not None:
            cls, args, _ = self.behaviour.raises
            raise cls(*args)
        return self.behaviour.value

    def expected_run(self, args: Args) -> Any:
        return {"n": args.amount} if self.with_model else args.plain

    def accepts(self, args: Args) -> bool:
        return args.amount is not None if self.with_model else args.plain is not None


@dataclass
class Pending:
    name: str
    args: Args
    issued_at: int


Row = tuple[str, str | None, str, str | None, int]


class RouterMachine(RuleBasedStateMachine):
    """The router against a reference model, with a window larger than any run."""

    window: ClassVar[int] = 1_000_000
    steps_taken: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        self.router = ToolRouter(
            approval_ttl_ms=TTL_MS, audit_window=self.window, audit_sink=self._open_sink()
        )
        self.now = 1_700_000_000_000
        self.routes: dict[str, Route] = {}
        self.pending: dict[str, Pending] = {}
        self.spent: list[str] = []
        self.issued: set[str] = set()
        self.rows: list[Row] = []

    def _open_sink(self) -> io.StringIO | Path:
        self.sink = io.StringIO()
        return self.sink

    def sink_rows(self) -> list[AuditRow]:
        return [AuditRow.model_validate_json(line) for line in self.sink.getvalue().split("\n")[:-1]]

    def _step(self) -> None:
        type(self).steps_taken += 1

    @initialize(plain=behaviours, gated=behaviours, modelled=behaviours)
    def start(self, plain: Behaviour, gated: Behaviour, modelled: Behaviour) -> None:
        """Every run starts with an ungated, a gated and a gated-with-input-model tool."""
        self._step()
        for name, behaviour, requires_approval, with_model in (
            ("lookup", plain, False, False),
            ("wire_money", gated, True, False),
            ("refund", modelled, True, True),
        ):
            self._register(name, behaviour, requires_approval, with_model)

    @rule(name=names, behaviour=behaviours, gated=st.booleans(), with_model=st.booleans())
    def register(self, name: str, behaviour: Behaviour, gated: bool, with_model: bool) -> None:
        self._step()
        self._register(name, behaviour, gated, with_model)

    def _register(self, name: str, behaviour: Behaviour, gated: bool, with_model: bool) -> None:
        route = Route(behaviour=behaviour, gated=gated, with_model=with_model)
        refused = not name.strip() or name in self.routes
        try:
            self.router.register(name, route.handler, gated, input_model=Amount if with_model else None)
        except ToolRouterError:
            assert refused, f"register({name!r}) refused a fresh name"
            return
        assert not refused, f"register({name!r}) accepted a blank or duplicate name"
        self.routes[name] = route

    @rule(data=st.data(), args=arguments, mutate_after=st.booleans())
    def call(self, data: st.DataObject, args: Args, mutate_after: bool) -> None:
        self._step()
        registered = st.sampled_from(sorted(self.routes)) if self.routes else names
        name = data.draw(st.one_of(registered, registered, registered, names), label="name")
        route = self.routes.get(name)
        runs_before = len(route.runs) if route else 0
        raw = copy.deepcopy(args.raw)
        result = self.router.call(name, raw, now_ms=self.now)
        if mutate_after and isinstance(raw, dict):
            raw.clear()
            raw["n"] = "mutated after the call"  # must not reach a handler approved later
        if route is None:
            assert result.error == f"unknown tool: {name}" and not result.ok
            self.rows.append((name, None, "unknown_tool", None, self.now))
            return
        if not route.accepts(args):
            assert not result.ok and not result.pending
            assert result.error is not None and result.error.startswith(f"invalid arguments for {name}: ")
            assert len(route.runs) == runs_before, "a handler ran on invalid arguments"
            self.rows.append((name, None, "invalid_args", None, self.now))
            return
        if route.gated:
            assert result.pending and not result.ok and result.request_id is not None
            assert result.request_id not in self.issued, "a request id was issued twice"
            assert len(route.runs) == runs_before, "a gated handler ran before approval"
            self.issued.add(result.request_id)
            self.pending[result.request_id] = Pending(name, args, self.now)
            self.rows.append((name, result.request_id, "pending", None, self.now))
            return
        self._check_ran(route, args, result, runs_before)
        self.rows.append((name, None, "ok" if route.behaviour.raises is None else "error", None, self.now))

    def _check_ran(self, route: Route, args: Args, result: Any, runs_before: int) -> None:
        assert len(route.runs) == runs_before + 1, "the handler did not run exactly once"
        assert route.runs[-1] == route.expected_run(args)
        if route.behaviour.raises is None:
            assert result.ok and result.value == route.behaviour.value and result.error is None
            assert type(result.value) is type(route.behaviour.value)
        else:
            assert not result.ok and result.error == route.behaviour.raises[2]

    def _decide(self, request_id: str, approver: str | None, approving: bool) -> None:
        self._step()
        pending = self.pending.pop(request_id, None)
        route = self.routes[pending.name] if pending else None
        runs_before = len(route.runs) if route else 0
        if approving:
            result = self.router.approve(request_id, approver=approver, now_ms=self.now)
        else:
            result = self.router.deny(request_id, approver=approver, now_ms=self.now)
        if pending is None or route is None:
            assert result.error == f"unknown request: {request_id}" and not result.ok
            assert not (result.denied or result.expired or result.pending)
            return  # logs nothing: a replay is not an attempt on the tool
        assert result.request_id == request_id
        self.spent.append(request_id)
        if self.now - pending.issued_at >= TTL_MS:
            assert result.expired and not result.denied and not result.ok
            assert len(route.runs) == runs_before
            self.rows.append((pending.name, request_id, "expired", approver, self.now))
        elif not approving:
            assert result.denied and not result.ok and len(route.runs) == runs_before
            self.rows.append((pending.name, request_id, "denied", approver, self.now))
        else:
            self._check_ran(route, pending.args, result, runs_before)
            outcome = "approved" if route.behaviour.raises is None else "error"
            self.rows.append((pending.name, request_id, outcome, approver, self.now))

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data(), approver=approvers, approving=st.booleans())
    def decide_a_live_request(self, data: st.DataObject, approver: str | None, approving: bool) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.pending)), label="request_id")
        self._decide(request_id, approver, approving)

    @rule(data=st.data(), approver=approvers, approving=st.booleans())
    def decide_a_spent_or_never_issued_request(
        self, data: st.DataObject, approver: str | None, approving: bool
    ) -> None:
        garbage = st.one_of(st.just("req-never-issued"), st.text(max_size=6)).filter(
            lambda i: i not in self.pending
        )
        ids = st.one_of(st.sampled_from(self.spent), garbage) if self.spent else garbage
        self._decide(data.draw(ids, label="request_id"), approver, approving)

    @rule()
    def expire(self) -> None:
        self._step()
        overdue = [rid for rid, p in self.pending.items() if self.now - p.issued_at >= TTL_MS]
        results = self.router.expire(now_ms=self.now)
        assert [r.request_id for r in results] == overdue
        assert all(r.expired and not r.ok for r in results)
        for rid in overdue:
            self.rows.append((self.pending.pop(rid).name, rid, "expired", None, self.now))
            self.spent.append(rid)

    @rule(
        ms=st.one_of(
            st.sampled_from([0, 1, TTL_MS - 1, TTL_MS]), st.integers(min_value=0, max_value=2 * TTL_MS)
        )
    )
    def advance_clock(self, ms: int) -> None:
        self._step()
        self.now += ms

    @staticmethod
    def _as_rows(rows: list[AuditRow]) -> list[Row]:
        return [(r.tool, r.request_id, r.outcome, r.approver, r.at_ms) for r in rows]

    @invariant()
    def audit_holds_every_attempt_in_order(self) -> None:
        log = self.router.audit_log()
        assert self._as_rows(log) == self.rows[-self.window :]
        assert [r.seq for r in log] == list(range(len(self.rows)))[-self.window :]

    @invariant()
    def a_returned_log_edited_by_the_caller_changes_nothing(self) -> None:
        log = self.router.audit_log()
        if log:
            log.pop()
        log.append(AuditRow(seq=-1, tool="forged", request_id=None, outcome="ok", at_ms=0))
        assert self._as_rows(self.router.audit_log()) == self.rows[-self.window :]

    @invariant()
    def the_sink_holds_every_row(self) -> None:
        written = self.sink_rows()
        assert self._as_rows(written) == self.rows
        assert [r.seq for r in written] == list(range(len(self.rows)))

    @invariant()
    def pending_matches_the_model(self) -> None:
        assert [p.request_id for p in self.router.pending()] == list(self.pending)


class SmallWindowRouterMachine(RouterMachine):
    """The same, with a window far smaller than a run: memory rolls, the sink keeps everything."""

    window: ClassVar[int] = 3

    def _open_sink(self) -> io.StringIO | Path:
        self.directory = tempfile.TemporaryDirectory()
        self.path = Path(self.directory.name) / "audit.jsonl"
        return self.path

    def sink_rows(self) -> list[AuditRow]:
        return read_audit_jsonl(self.path) if self.path.exists() else []

    def teardown(self) -> None:
        self.directory.cleanup()


def _run(machine: type[RouterMachine], max_examples: int) -> int:
    machine.steps_taken = 0
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=max_examples,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
    return machine.steps_taken


def test_router_keeps_every_invariant_over_random_register_call_approve_deny_expire_sequences() -> None:
    steps = _run(RouterMachine, max_examples=70)
    assert steps >= MIN_TOTAL_STEPS, f"only {steps} steps ran"


def test_with_a_small_window_the_jsonl_sink_still_holds_every_row() -> None:
    steps = _run(SmallWindowRouterMachine, max_examples=30)
    assert steps >= MIN_TOTAL_STEPS // 4, f"only {steps} steps ran"
