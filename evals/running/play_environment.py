"""Play a case that has an environment: the agent loop against live instances of its classes.

Every call the model makes runs against the episode's own environment (fresh instances loaded
with the case's initial state) and the model gets its real answer, whatever the target: a
provider, the local model, the emulator or a cassette. A cassette holds the model's side only,
so a replay runs the calls again and reaches the same state (the classes are deterministic:
their randomness is seeded by the scenario), which is what lets the recorded requests match.

As BFCL's inference loop does (bfcl-eval 2026.3.23, `base_handler.inference_multi_turn_FC`):
each user turn offers the tools added up to it, but every public method of the environment
answers, offered or not; each turn runs until the model answers without calls, and a turn
whose model keeps calling past `steps_per_turn` steps ends the episode (BFCL's force quit:
the turns after it are never played, and the state verdict fails the episode).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, RootModel

from xpeval.adapters.contract import Message
from xpeval.evals.cases import Case
from xpeval.evals.runtime import AgentLoop, AgentState, AgentStatus, ToolDefinition, ToolRegistry, ToolRouter
from xpeval.evals.runtime.environment import ToolEnvironment
from xpeval.evals.runtime.loop import TurnTaker


class EnvironmentArguments(RootModel[dict[str, Any]]):
    """Any JSON object: BFCL hands a call's arguments to its method unchecked (a wrong one is the
    method's error, which the model sees)."""


class EnvironmentCallError(RuntimeError):
    """A call the environment answered with an error; the message is BFCL's error text."""


def environment_tools(case: Case, environment: ToolEnvironment) -> tuple[list[ToolDefinition], ToolRouter]:
    """The case's tools (every turn's) as definitions answered by `environment`, and a router
    that also answers the environment's methods no turn offers (as BFCL's executor does)."""

    def handler(name: str) -> Any:
        def handle(arguments: Any) -> str:
            if isinstance(arguments, BaseModel):
                arguments = arguments.model_dump(mode="json")
            outcome = environment.call(name, arguments)
            if outcome.error:
                raise EnvironmentCallError(outcome.text)
            return outcome.text

        return handle

    parameters = {tool.name: tool for tool in case.all_tools}
    definitions = [
        ToolDefinition(
            id=name,
            description=parameters[name].description if name in parameters else "",
            input_model=EnvironmentArguments,
            risk="read",
            handler=handler(name),
            parameters=dict(parameters[name].parameters) if name in parameters else {"type": "object"},
        )
        for name in dict.fromkeys([*parameters, *environment.method_names])
    ]
    return definitions, ToolRouter.from_registry(ToolRegistry(definitions).seal())


async def play_in_environment(
    adapter: TurnTaker, case: Case, model: str, *, stream: bool = False
) -> list[AgentState]:
    """Run an environment case turn by turn: the loop's state of each turn played (see the
    module docstring). Never raises for what the provider or the model does."""
    if case.environment is None:
        raise ValueError(f"case {case.id} has no environment")
    environment = ToolEnvironment(case.environment)
    definitions, router = environment_tools(case, environment)
    by_name = {definition.id: definition for definition in definitions}
    played: list[AgentState] = []
    conversation: list[Message] = []
    for turn in case.turns:
        offered = ToolRegistry([by_name[tool.name] for tool in case.offered_tools(turn.index)]).seal()
        loop = AgentLoop(
            adapter,
            offered,
            router,
            model=model,
            max_steps=case.environment.steps_per_turn + 1,
            tool_choice=case.tool_choice,
            stream=stream,
        )
        conversation = [*conversation, *turn.messages]
        state = await loop.run(conversation)
        played.append(state)
        if state.error is not None or state.status is AgentStatus.MAX_STEPS_EXCEEDED:
            break  # a provider error, or BFCL's force quit: the remaining turns are not played
        conversation = list(state.messages)
    return played


__all__ = ["EnvironmentArguments", "EnvironmentCallError", "environment_tools", "play_in_environment"]
