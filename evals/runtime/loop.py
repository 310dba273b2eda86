"""The agent loop: a deterministic state machine over one adapter and one router.

Its rules are in docs/ARCHITECTURE.md, "The tool runtime".

Each step sends the conversation and the registry's specs through the adapter (the canonical
contract only: it never touches a wire format) and executes the returned calls through the
router. Tool failures go back to the model as error tool results; provider errors end the run.
Deterministic given the same adapter responses: nothing random or clock-dependent enters the
messages or statuses (request ids are nonces and live only in the audit, whose clock is injectable).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import pydantic_core
from pydantic import BaseModel, Field, TypeAdapter

from xpeval.adapters.contract import (
    Message,
    ProviderError,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from xpeval.evals.runtime.audit import AuditRow
from xpeval.evals.runtime.clock import now_ms
from xpeval.evals.runtime.router import CallResult, ToolRouter
from xpeval.evals.runtime.tool_errors import describe_exception
from xpeval.evals.runtime.tool_registry import ToolRegistry


class AgentStatus(StrEnum):
    IDLE = "IDLE"
    THINKING = "THINKING"
    EXECUTING_TOOL = "EXECUTING_TOOL"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    MAX_STEPS_EXCEEDED = "MAX_STEPS_EXCEEDED"


class AgentState(BaseModel):
    """Everything a run did: the final status, every message, each turn's result, the audit rows."""

    status: AgentStatus = AgentStatus.IDLE
    step_count: int = 0
    """Adapter turns taken (one per step)."""
    max_steps: int
    messages: list[Message] = Field(default_factory=list)
    turns: list[TurnResult] = Field(default_factory=list)
    audit: list[AuditRow] = Field(default_factory=list)
    """The router's rows from this run's start on that are still in its in-memory window (a
    router shared by concurrent runs interleaves their rows)."""
    error: ProviderError | None = None
    """The provider error that ended a FAILED run."""
    transitions: list[AgentStatus] = Field(default_factory=lambda: [AgentStatus.IDLE])

    def _enter(self, status: AgentStatus) -> None:
        self.status = status
        self.transitions.append(status)


class TurnTaker(Protocol):
    """What the loop needs from an adapter: `xpeval.adapters.adapter.Adapter` is one."""

    async def turn(self, request: TurnRequest) -> TurnResult: ...


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A gated call awaiting the approval policy's decision."""

    request_id: str
    call: ToolCall


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    approved: bool
    approver: str | None = None


ApprovalPolicy = Callable[[ApprovalRequest], ApprovalDecision | bool | Awaitable[ApprovalDecision | bool]]
"""Decides one gated call (sync or async); `True`/`False` are accepted as a decision without an approver."""

DEFAULT_APPROVER = "default-deny"


def deny_all(request: ApprovalRequest) -> ApprovalDecision:
    """The default policy: no gated call runs unless the caller says who approves it."""
    return ApprovalDecision(approved=False, approver=DEFAULT_APPROVER)


def approve_all(approver: str) -> ApprovalPolicy:
    """A policy approving every gated call in `approver`'s name (for evals that exercise gated tools)."""

    def policy(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(approved=True, approver=approver)

    return policy


_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class AgentLoop:
    """Runs a conversation to COMPLETED, FAILED or MAX_STEPS_EXCEEDED.

    A gated call is put to `approval_policy` (default: deny, with a tool-result message telling
    the model so). A successful call to a `terminal`-risk tool ends the run as COMPLETED.
    When the step limit is reached the last step's calls have been executed, so the
    conversation stays well formed (every call has its result).
    """

    def __init__(
        self,
        adapter: TurnTaker,
        registry: ToolRegistry,
        router: ToolRouter | None = None,
        *,
        model: str | None = None,
        max_steps: int = 10,
        tool_choice: ToolChoice = "auto",
        stream: bool = False,
        approval_policy: ApprovalPolicy = deny_all,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        """`router` defaults to `ToolRouter.from_registry(registry)`; `model` to the adapter's default."""
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        resolved_model = model or getattr(adapter, "default_model", None)
        if not isinstance(resolved_model, str) or not resolved_model:
            raise ValueError("no model: pass model=... or use an adapter with a default_model")
        self.adapter = adapter
        self.registry = registry
        self.router = router if router is not None else ToolRouter.from_registry(registry)
        self.model = resolved_model
        self.max_steps = max_steps
        self.tool_choice = tool_choice
        self.stream = stream
        self.approval_policy = approval_policy
        self.clock = clock

    async def run(self, prompt: str | Sequence[Message], *, system: str | None = None) -> AgentState:
        """Run from a user prompt (or a whole conversation to continue) until a final status."""
        state = AgentState(max_steps=self.max_steps, messages=self._initial_messages(prompt, system))
        first_seq = self.router.audit_total
        state._enter(AgentStatus.THINKING)
        while True:
            state.step_count += 1
            result = await self._turn(state.messages)
            state.turns.append(result)
            if result.error is not None:  # a provider error ends the run, kept as the state's error
                state.error = result.error
                state._enter(AgentStatus.FAILED)
                break
            state.messages.append(result.to_message())
            if not result.tool_calls:
                state._enter(AgentStatus.COMPLETED)
                break
            state._enter(AgentStatus.EXECUTING_TOOL)
            ended_by_terminal_tool = False
            for call in result.tool_calls:
                outcome = await self._execute(call)
                state.messages.append(_tool_message(call, outcome))
                definition = self.registry.get(call.name)
                ended_by_terminal_tool |= (
                    outcome.ok and definition is not None and definition.risk == "terminal"
                )
            if ended_by_terminal_tool:
                state._enter(AgentStatus.COMPLETED)
                break
            if state.step_count >= self.max_steps:  # the hard step limit: no turn beyond it
                state._enter(AgentStatus.MAX_STEPS_EXCEEDED)
                break
            state._enter(AgentStatus.THINKING)
        state.audit = [row for row in self.router.audit_log() if row.seq >= first_seq]
        return state

    def run_sync(self, prompt: str | Sequence[Message], *, system: str | None = None) -> AgentState:
        """`run` for synchronous callers (not from inside a running event loop)."""
        return asyncio.run(self.run(prompt, system=system))

    def _initial_messages(self, prompt: str | Sequence[Message], system: str | None) -> list[Message]:
        messages: list[Message] = [SystemMessage(content=system)] if system else []
        if isinstance(prompt, str):
            messages.append(UserMessage(content=prompt))
        else:
            messages.extend(_MESSAGES.validate_python([_as_data(m) for m in prompt]))
        return messages

    async def _turn(self, messages: list[Message]) -> TurnResult:
        request = TurnRequest(
            model=self.model,
            messages=list(messages),
            tools=self.registry.specs(),
            tool_choice=self.tool_choice,
            stream=self.stream,
        )
        try:
            return await self.adapter.turn(request)
        except Exception as exc:  # Adapter.turn never raises; a duck-typed one might: record, do not crash
            return TurnResult(
                error=ProviderError(kind="decode", message=f"adapter raised: {describe_exception(exc)}")
            )

    async def _execute(self, call: ToolCall) -> CallResult:
        """One call through the router; unparseable argument text is handed over as text, so the
        router refuses it as invalid arguments (and audits the attempt)."""
        arguments: Any = (
            call.raw_arguments if call.parse_error and call.raw_arguments is not None else call.arguments
        )
        result = self.router.call(call.name, arguments, now_ms=self.clock())
        if not result.pending or result.request_id is None:
            return result
        decision = await self._decide(ApprovalRequest(request_id=result.request_id, call=call))
        if decision.approved:
            return self.router.approve(result.request_id, approver=decision.approver, now_ms=self.clock())
        return self.router.deny(result.request_id, approver=decision.approver, now_ms=self.clock())

    async def _decide(self, request: ApprovalRequest) -> ApprovalDecision:
        """The policy's decision; a policy that raises or answers nonsense denies (fail closed)."""
        try:
            decision = self.approval_policy(request)
            if inspect.isawaitable(decision):
                decision = await decision
        except Exception:
            return ApprovalDecision(approved=False, approver="approval-policy-error")
        if isinstance(decision, bool):
            return ApprovalDecision(approved=decision)
        if isinstance(decision, ApprovalDecision):
            return decision
        return ApprovalDecision(approved=False, approver="approval-policy-error")


def _as_data(message: Any) -> Any:
    return message.model_dump() if isinstance(message, BaseModel) else message


def _tool_message(call: ToolCall, result: CallResult) -> ToolResultMessage:
    """A call's result as the model sees it: the value as text, or the error with is_error set."""
    if result.ok:
        content = render_value(result.value)
    elif result.denied:
        content = f"{call.name} requires approval and the request was denied; it did not run"
    elif result.expired:
        content = f"{call.name} requires approval and the request expired; it did not run"
    else:
        content = result.error or "tool call failed"
    return ToolResultMessage(tool_call_id=call.id, name=call.name, content=content, is_error=not result.ok)


def render_value(value: Any) -> str:
    """A tool's value as tool-result text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return pydantic_core.to_json(value, fallback=repr).decode("utf-8")
    except (ValueError, RecursionError):  # circular or absurdly deep values
        return (
            repr(value) if not isinstance(value, (list, dict)) else f"<unrenderable {type(value).__name__}>"
        )
