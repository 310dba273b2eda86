"""The agent loop's state machine, driven by scripted provider replies.

Replies are canonical TurnResults that each adapter's own wire renders into its provider's
bytes (`xpeval.evals.emulator.ScriptedTransport`), so every test goes through a real adapter, its SDK
and its wire, and the loop sees only the canonical contract.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import (
    ProviderError,
    ToolCall,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from xpeval.adapters.registry import create_adapter, effective_contract
from xpeval.adapters.wires import get_wire
from xpeval.evals.emulator import Reply, ScriptedTransport
from xpeval.evals.runtime import (
    AgentLoop,
    AgentState,
    AgentStatus,
    ApprovalDecision,
    ApprovalRequest,
    ToolRegistry,
    ToolRouter,
    approve_all,
)
from xpeval.evals.runtime.loop import ApprovalPolicy


class Lookup(BaseModel):
    order_id: str


class Refund(BaseModel):
    order_id: str
    cents: int


class Answer(BaseModel):
    text: str


def call(
    name: str, call_id: str, arguments: dict[str, Any] | None = None, raw: str | None = None
) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments or {}, raw_arguments=raw)


def calls(*tool_calls: ToolCall) -> Reply:
    return Reply(result=TurnResult(tool_calls=list(tool_calls), finish_reason="tool_calls"))


def text(content: str) -> Reply:
    return Reply(result=TurnResult(text=content, finish_reason="stop"))


class Shop:
    """A registry with a read tool, a failing tool, a gated refund and a terminal answer."""

    def __init__(self) -> None:
        self.refunds: list[Refund] = []
        self.registry = ToolRegistry()
        self.registry.register(
            "order_read", "Read an order", Lookup, handler=lambda a: {"id": a.order_id, "total": 0}
        )
        self.registry.register("order_sync", "Sync an order", Lookup, handler=self._explode)
        self.registry.register("refund", "Refund an order", Refund, risk="terminal", handler=self._refund)
        self.registry.register("answer_user", "Answer and finish", Answer, risk="terminal")
        self.registry.seal()

    @staticmethod
    def _explode(args: Lookup) -> None:
        raise ConnectionError()

    def _refund(self, args: Refund) -> str:
        self.refunds.append(args)
        return f"refunded {args.cents}"

    def router(self) -> ToolRouter:
        return ToolRouter.from_registry(self.registry, requires_approval={"refund"})


def run(
    replies: list[Reply],
    *,
    adapter_id: str = "openai-chat",
    shop: Shop | None = None,
    max_steps: int = 8,
    policy: ApprovalPolicy | None = None,
) -> tuple[AgentState, ScriptedTransport, Shop]:
    shop = shop or Shop()
    script = ScriptedTransport(wire=get_wire(effective_contract(adapter_id).wire), replies=replies)

    async def go() -> AgentState:
        adapter = create_adapter(
            adapter_id, AdapterSettings(transport=script.transport(), api_key=SecretStr("test"))
        )
        extra: dict[str, Any] = {"approval_policy": policy} if policy is not None else {}
        loop = AgentLoop(
            adapter,
            shop.registry,
            shop.router(),
            model="scripted",
            max_steps=max_steps,
            clock=lambda: 1_000,
            **extra,
        )
        try:
            return await loop.run("refund order A-1")
        finally:
            await adapter.aclose()

    return asyncio.run(go()), script, shop


def test_a_model_that_never_stops_calling_tools_ends_at_max_steps_exceeded(xpeval_adapter_id: str) -> None:
    forever = [calls(call("order_read", f"call_{i}", {"order_id": "A-1"})) for i in range(10)]
    state, script, _ = run(forever, adapter_id=xpeval_adapter_id, max_steps=3)
    assert state.status is AgentStatus.MAX_STEPS_EXCEEDED
    assert state.step_count == 3 and len(script.requests) == 3
    results = [m for m in state.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 3, "the last step's call was left without a result"


def test_tool_failures_go_back_to_the_model_as_error_results_and_the_run_goes_on(
    xpeval_adapter_id: str,
) -> None:
    replies = [
        calls(
            call("order_write", "c1", {"order_id": "A-1"}),
            call("order_read", "c2", raw='{"order_id": "A-1"'),
            call("order_read", "c3", {"order_id": 7}),
            call("order_sync", "c4", {"order_id": "A-1"}),
        ),
        text("I could not read the order."),
    ]
    state, script, _ = run(replies, adapter_id=xpeval_adapter_id)
    assert state.status is AgentStatus.COMPLETED and state.step_count == 2
    results = {m.tool_call_id: m for m in state.messages if isinstance(m, ToolResultMessage)}
    assert all(m.is_error for m in results.values()) and len(results) == 4
    assert results["c1"].content == "unknown tool: order_write"
    assert results["c2"].content.startswith("invalid arguments for order_read: ")
    if state.turns[0].tool_calls[1].parse_error:  # wires that carry argument text keep the broken text
        assert "arguments are not valid JSON" in results["c2"].content
    assert (
        results["c3"].content == "invalid arguments for order_read: order_id: Input should be a valid string"
    )
    assert results["c4"].content == "ConnectionError"
    assert [r.outcome for r in state.audit] == ["unknown_tool", "invalid_args", "invalid_args", "error"]
    assert len(script.requests) == 2


def test_each_step_sends_the_whole_conversation_and_the_registry_specs() -> None:
    replies = [calls(call("order_read", "c1", {"order_id": "A-1"})), text("Order A-1 totals 0.")]
    state, script, shop = run(replies)
    second: Any = script.request_json(1)
    assert [t["function"]["name"] for t in second["tools"]] == list(shop.registry.ids())
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]
    assert state.messages[-2] == ToolResultMessage(
        tool_call_id="c1", name="order_read", content='{"id":"A-1","total":0}'
    )
    assert state.transitions == [
        AgentStatus.IDLE,
        AgentStatus.THINKING,
        AgentStatus.EXECUTING_TOOL,
        AgentStatus.THINKING,
        AgentStatus.COMPLETED,
    ]


def test_a_provider_error_ends_the_run_failed_with_the_error_and_the_conversation_kept() -> None:
    replies = [
        calls(call("order_read", "c1", {"order_id": "A-1"})),
        Reply.http_error(529, "Overloaded", error_type="overloaded_error"),
    ]
    state, _, _ = run(replies)
    assert state.status is AgentStatus.FAILED and state.step_count == 2
    assert state.error is not None and state.error.status == 529 and state.error.message == "Overloaded"
    assert [m.role for m in state.messages] == ["user", "assistant", "tool"]


def test_a_gated_call_is_denied_by_default_and_the_model_is_told() -> None:
    replies = [calls(call("refund", "c1", {"order_id": "A-1", "cents": 500})), text("I cannot refund that.")]
    state, _, shop = run(replies)
    assert state.status is AgentStatus.COMPLETED and shop.refunds == []
    result = next(m for m in state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error and "denied" in result.content
    assert [(r.outcome, r.approver) for r in state.audit] == [("pending", None), ("denied", "default-deny")]


def test_an_approved_gated_terminal_call_runs_once_and_completes_the_run() -> None:
    replies = [calls(call("refund", "c1", {"order_id": "A-1", "cents": 500})), text("never sent")]
    state, script, shop = run(replies, policy=approve_all("alice"))
    assert state.status is AgentStatus.COMPLETED and state.step_count == 1 and len(script.requests) == 1
    assert shop.refunds == [Refund(order_id="A-1", cents=500)]
    assert [(r.outcome, r.approver) for r in state.audit] == [("pending", None), ("approved", "alice")]
    assert state.audit[0].request_id == state.audit[1].request_id


def test_an_async_approval_policy_sees_the_call_it_decides() -> None:
    seen: list[ApprovalRequest] = []

    async def ask_a_human(request: ApprovalRequest) -> ApprovalDecision:
        seen.append(request)
        return ApprovalDecision(approved=request.call.arguments["cents"] < 1_000, approver="bob")

    replies = [calls(call("refund", "c1", {"order_id": "A-1", "cents": 5_000})), text("Too large to refund.")]
    state, _, shop = run(replies, policy=ask_a_human)
    assert shop.refunds == [] and state.status is AgentStatus.COMPLETED
    assert seen[0].call.name == "refund" and seen[0].request_id == state.audit[0].request_id


def test_an_approval_policy_that_raises_denies() -> None:
    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("approval service down")

    replies = [calls(call("refund", "c1", {"order_id": "A-1", "cents": 5})), text("Could not refund.")]
    state, _, shop = run(replies, policy=broken)
    assert shop.refunds == [] and state.status is AgentStatus.COMPLETED
    assert [r.outcome for r in state.audit] == ["pending", "denied"]


def test_a_terminal_tool_without_a_handler_answers_with_its_arguments_and_ends_the_run() -> None:
    state, script, _ = run([calls(call("answer_user", "c1", {"text": "All done."})), text("never sent")])
    assert state.status is AgentStatus.COMPLETED and len(script.requests) == 1
    assert state.messages[-1] == ToolResultMessage(
        tool_call_id="c1", name="answer_user", content='{"text":"All done."}'
    )


def test_the_same_replies_give_the_same_run() -> None:
    replies = [
        calls(call("order_read", "c1", {"order_id": "A-1"}), call("order_sync", "c2", {"order_id": "A-1"})),
        text("Done."),
    ]
    first, _, _ = run(replies)
    second, _, _ = run(replies)
    assert first.messages == second.messages and first.transitions == second.transitions
    assert [(r.tool, r.outcome, r.at_ms) for r in first.audit] == [
        (r.tool, r.outcome, r.at_ms) for r in second.audit
    ]


class RaisingAdapter:
    default_model = "broken"

    async def turn(self, request: TurnRequest) -> TurnResult:
        raise RuntimeError("socket exploded")


def test_an_adapter_that_raises_ends_the_run_failed_instead_of_crashing() -> None:
    state = AgentLoop(RaisingAdapter(), Shop().registry).run_sync("hi")
    assert state.status is AgentStatus.FAILED
    assert state.error == ProviderError(kind="decode", message="adapter raised: socket exploded")
    assert state.messages == [UserMessage(content="hi")]


@pytest.mark.parametrize("max_steps", [0, -1, True])
def test_a_step_limit_below_one_is_refused(max_steps: int) -> None:
    with pytest.raises(ValueError, match="max_steps"):
        AgentLoop(RaisingAdapter(), Shop().registry, max_steps=max_steps)
