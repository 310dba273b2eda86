"""Play one case through one adapter: the model's calls per user turn, and how it ended.

Single-turn categories are one model turn; the calls are scored, not executed. Multi-turn and
approval cases run the agent loop: calls go through the tool router, which answers with the
case's scripted outputs and asks the simulated human (the case's `approvals`) about gated tools;
a case with an environment runs against it instead (`xpeval.evals.running.play_environment`), and
a task case is a conversation with its simulated user (`xpeval.evals.running.play_task`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from pydantic import RootModel, model_validator

from xpeval.adapters.contract import Message, ProviderError, ToolCall, TurnResult, Usage
from xpeval.evals.cases import Case
from xpeval.evals.cases.model import is_multi_step
from xpeval.evals.cases.scripted import scripted_handler
from xpeval.evals.running.play_environment import play_in_environment
from xpeval.evals.runtime import (
    AgentLoop,
    AgentState,
    ApprovalDecision,
    ApprovalRequest,
    ToolDefinition,
    ToolRegistry,
    ToolRouter,
)
from xpeval.evals.runtime.loop import TurnTaker

DEFAULT_MAX_STEPS = 4
"""Steps per user turn: a call, its result, the answer, plus one spare (a model that keeps
calling tools is stopped, not waited for)."""


@dataclass
class EpisodeOutcome:
    """What the model did in one case."""

    calls_per_turn: list[list[ToolCall]] = field(default_factory=list)
    error: ProviderError | None = None
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    final_text: str | None = None
    refusal: str | None = None
    said: list[str] | None = None
    """A task case: every text the agent wrote to the user, in order (its reward searches them)."""
    ended: str | None = None
    """A task case: how its conversation ended (`xpeval.evals.running.play_task.Ending`)."""

    def add_turn(self, state: AgentState) -> None:
        """What the agent loop did in one user turn: its steps, usage, calls, text and error."""
        self.steps += state.step_count
        calls: list[ToolCall] = []
        for result in state.turns:
            self.add_usage(result)
            calls.extend(result.tool_calls)
            self.final_text = result.text
            self.refusal = result.refusal or self.refusal
        self.calls_per_turn.append(calls)
        if state.error is not None:
            self.error = state.error

    def add_usage(self, result: TurnResult) -> None:
        if result.usage is None:
            return
        self.usage = Usage(
            **{
                name: _plus(getattr(self.usage, name), getattr(result.usage, name))
                for name in Usage.model_fields
            }
        )


def _plus(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


_MODELS_KEPT = 4096
_models: dict[tuple[str, str], type[RootModel[dict[str, Any]]]] = {}
"""Input models built so far, by (tool name, the schema as JSON): a run plays each
case through every adapter, and building a pydantic class per tool per episode was 1.9 % of
the default replay's CPU (py-spy). The model holds no state, so sharing one is safe."""


def _arguments_model(tool_name: str, schema: dict[str, Any]) -> type[RootModel[dict[str, Any]]]:
    """A pydantic input model that accepts exactly what the tool's JSON Schema accepts.

    The case's schema, not a model derived from it, is what the model was shown; validating
    with the same schema keeps the router's verdict consistent with it.
    """
    try:
        # Key order kept: which violation jsonschema names first follows the schema's order.
        key = (tool_name, json.dumps(schema))
    except (TypeError, ValueError, RecursionError):  # not plain JSON: no key that cannot collide
        return _new_arguments_model(tool_name, schema)
    model = _models.get(key)
    if model is None:
        if len(_models) >= _MODELS_KEPT:
            _models.clear()
        model = _models[key] = _new_arguments_model(tool_name, schema)
    return model


def _new_arguments_model(tool_name: str, schema: dict[str, Any]) -> type[RootModel[dict[str, Any]]]:
    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = validator_cls(copy.deepcopy(schema))

    class Arguments(RootModel[dict[str, Any]]):
        @model_validator(mode="after")
        def _matches_schema(self) -> Arguments:
            error = jsonschema.exceptions.best_match(validator.iter_errors(self.root))
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "arguments"
                raise ValueError(f"{where}: {error.message}")
            return self

    Arguments.__name__ = f"{tool_name}_arguments"
    return Arguments


def case_tools(case: Case) -> tuple[ToolRegistry, ToolRouter]:
    """The case's tools, with their exact schemas, answered by its scripted outputs."""
    definitions = [
        ToolDefinition(
            id=tool.name,
            description=tool.description,
            input_model=_arguments_model(tool.name, tool.parameters),
            risk="read",
            handler=scripted_handler(case, tool.name),
            parameters=dict(tool.parameters),
        )
        for tool in case.tools
    ]
    registry = ToolRegistry(definitions).seal()
    router = ToolRouter.from_registry(registry, requires_approval=dict(case.approvals))
    return registry, router


def simulated_human(case: Case) -> Callable[[ApprovalRequest], ApprovalDecision]:
    """The approval policy a case scripts: its decision per gated tool (unknown: deny)."""
    decisions = dict(case.approvals)

    def decide(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(
            approved=decisions.get(request.call.name) == "approve", approver="case-script"
        )

    return decide


AdapterSwitch = Callable[[str, int], TurnTaker]
"""The adapter a case turn names (`FollowUp.adapter`) for that turn (its index) on, reached the
way the episode's own is."""


def _handed_over(
    conversation: list[Message], source: str | None, target: str, turn: int, switch: AdapterSwitch | None
) -> tuple[list[Message], TurnTaker] | ProviderError:
    """The conversation converted for `target` and `target`'s adapter, or the `handoff` error."""
    from xpeval.evals.handoff.switch import hand_over

    if source is None:
        return ProviderError(
            kind="handoff", message=f"handoff to {target}: the episode's own adapter is not known"
        )
    converted = hand_over(conversation, source, target)
    if isinstance(converted, ProviderError):
        return converted
    if switch is None:
        return ProviderError(
            kind="handoff",
            message=f"handoff {source} -> {target}: this run reaches one adapter per episode "
            "(a live run against the emulator reaches others)",
        )
    return converted, switch(target, turn)


async def play_case(
    adapter: TurnTaker,
    case: Case,
    model: str,
    *,
    stream: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    adapter_id: str | None = None,
    switch: AdapterSwitch | None = None,
) -> EpisodeOutcome:
    """Run `case` through `adapter` (registered as `adapter_id`); never raises for anything the
    provider or model does. A follow-up naming another adapter hands the conversation to it
    (`switch` reaches it; docs/provider-loop-rules.md, "Handoff"): a handoff a rule makes
    impossible ends the episode with a `handoff` error."""
    outcome = EpisodeOutcome()
    if not is_multi_step(case.category):
        request = case.turn_request(model).model_copy(update={"stream": stream})
        result = await adapter.turn(request)
        outcome.steps = 1
        outcome.add_usage(result)
        outcome.calls_per_turn = [list(result.tool_calls)]
        outcome.error = result.error
        outcome.final_text = result.text
        outcome.refusal = result.refusal
        return outcome

    if case.task is not None:
        return await _play_task(adapter, case, model, stream=stream)
    if case.environment is not None:
        for state in await play_in_environment(adapter, case, model, stream=stream):
            outcome.add_turn(state)
        return outcome
    registry, router = case_tools(case)
    loop = AgentLoop(
        adapter,
        registry,
        router,
        model=model,
        max_steps=max_steps,
        stream=stream,
        approval_policy=simulated_human(case),
    )
    conversation: list[Message] = []
    current = adapter_id
    for turn in case.turns:
        conversation = [*conversation, *turn.messages]
        if turn.adapter is not None and turn.adapter != current:
            moved = _handed_over(conversation, current, turn.adapter, turn.index, switch)
            if isinstance(moved, ProviderError):
                outcome.error = moved
                break
            conversation, taker = moved
            current = turn.adapter
            loop = AgentLoop(
                taker,
                registry,
                router,
                max_steps=max_steps,
                stream=stream,
                approval_policy=simulated_human(case),
            )
        state = await loop.run(conversation)
        outcome.add_turn(state)
        if state.error is not None:
            break
        conversation = list(state.messages)
    return outcome


async def _play_task(adapter: TurnTaker, case: Case, model: str, *, stream: bool) -> EpisodeOutcome:
    """A task's conversation as an episode's outcome: the agent's calls per user turn, its texts,
    how it ended; the user model's replies count in its steps and usage."""
    from xpeval.evals.running.play_task import play_task

    play = await play_task(adapter, case, model, stream=stream)
    outcome = EpisodeOutcome()
    for state in play.agent_turns:
        outcome.add_turn(state)
    for result in play.user_turns:
        outcome.steps += 1
        outcome.add_usage(result)
    outcome.error = play.error
    outcome.said = play.said
    outcome.ended = play.ended
    return outcome
