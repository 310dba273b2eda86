"""Play a task case: the simulated user and the agent take turns over one environment.

The loop τ²-bench's orchestrator runs, over xpeval's agent loop:

1. the user model answers the agent's greeting (or its last message);
2. a user message holding an end token (`###STOP###`) ends the conversation (`user_stop`);
3. otherwise the agent runs on the conversation so far: its calls execute against the episode's
   environment (fresh instances loaded with the case's initial state) until it answers with text,
   which goes back to the user model;
4. after `task.max_turns` user messages without an end token the conversation ends unfinished
   (`max_turns`); an agent that keeps calling past `environment.steps_per_turn` steps ends it too
   (`max_steps`), and so does a provider error on either side (`error`).

Both sides go through the episode's adapter, so one cassette holds the whole conversation and a
replay runs it again, tool results included, offline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from xpeval.adapters.contract import Message, ProviderError, TurnResult, UserMessage
from xpeval.evals.cases import Case
from xpeval.evals.cases.task import ends_conversation
from xpeval.evals.running.play_environment import environment_tools
from xpeval.evals.running.simulated_user import SimulatedUser
from xpeval.evals.runtime import AgentLoop, AgentState, AgentStatus, ToolRegistry
from xpeval.evals.runtime.environment import ToolEnvironment
from xpeval.evals.runtime.loop import TurnTaker

Ending = Literal["user_stop", "max_turns", "max_steps", "error"]
"""How a task's conversation ended; only `user_stop` can earn a reward (τ² rewards a
conversation only when the user or the agent ended it)."""

SILENT = "(no answer)"
"""What one side is sent when the other wrote no text (an empty message is refused by some
providers)."""


@dataclass
class TaskPlay:
    """What a task's conversation produced: the agent's loop per user turn, what it said to the
    user, what the user said, and how it ended."""

    agent_turns: list[AgentState] = field(default_factory=list)
    user_turns: list[TurnResult] = field(default_factory=list)
    """The user model's replies (their usage counts in the episode's)."""
    said: list[str] = field(default_factory=list)
    """Every text the agent wrote, in order (with calls or alone): what the reward searches."""
    heard: list[str] = field(default_factory=list)
    """Every message the user model wrote, the closing one included."""
    ended: Ending = "max_turns"
    error: ProviderError | None = None


async def play_task(adapter: TurnTaker, case: Case, model: str, *, stream: bool = False) -> TaskPlay:
    """Run a task case's conversation (see the module docstring); never raises for what the
    provider or either model does."""
    if case.task is None or case.environment is None:
        raise ValueError(f"case {case.id} is not a task")
    environment = ToolEnvironment(case.environment)
    definitions, router = environment_tools(case, environment)
    by_name = {definition.id: definition for definition in definitions}
    registry = ToolRegistry([by_name[tool.name] for tool in case.tools]).seal()
    agent = AgentLoop(
        adapter,
        registry,
        router,
        model=model,
        max_steps=case.environment.steps_per_turn + 1,
        tool_choice=case.tool_choice,
        stream=stream,
    )
    user = SimulatedUser(adapter, model, case.task.user, stream=stream)
    play = TaskPlay()
    conversation: list[Message] = list(case.messages)
    last_said: str | None = None
    for _ in range(case.task.max_turns):
        reply = await user.reply(last_said)
        play.user_turns.append(reply)
        if reply.error is not None:
            play.ended, play.error = "error", reply.error
            return play
        utterance = reply.text or SILENT
        play.heard.append(utterance)
        if ends_conversation(utterance):
            play.ended = "user_stop"
            return play
        state = await agent.run([*conversation, UserMessage(content=utterance)])
        play.agent_turns.append(state)
        play.said += [result.text for result in state.turns if result.text]
        if state.error is not None:
            play.ended, play.error = "error", state.error
            return play
        if state.status is AgentStatus.MAX_STEPS_EXCEEDED:
            play.ended = "max_steps"
            return play
        conversation = list(state.messages)
        last_said = (state.turns[-1].text if state.turns else None) or SILENT
    play.ended = "max_turns"
    return play


__all__ = ["SILENT", "Ending", "TaskPlay", "play_task"]
