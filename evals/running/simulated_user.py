"""The simulated user of a task: a model behind an adapter, told the scenario, replying to the agent.

As τ²-bench's user simulator does, the user model gets a system prompt (how to play a user,
then the task's instructions) and sees the conversation from its own side: the agent's
messages are its `user` messages, its own earlier replies its `assistant` messages, and the
conversation opens with the agent's greeting (τ²'s orchestrator opens every conversation with
it). It has no tools. It ends the conversation by writing `###STOP###` (or τ²'s transfer and
out-of-scope tokens).

The user model goes through the episode's own adapter and model, so its requests and replies
are recorded in the episode's cassette beside the agent's and a replay reproduces the whole
conversation offline (docs/cases.md, "Task cases", says where this differs from τ²).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xpeval.adapters.contract import (
    AssistantMessage,
    Message,
    ProviderError,
    SystemMessage,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from xpeval.evals.cases.task import OUT_OF_SCOPE, STOP, TRANSFER, UserScenario
from xpeval.evals.runtime.loop import TurnTaker
from xpeval.evals.runtime.tool_errors import describe_exception

GREETING = "Hi! How can I help you today?"
"""The agent's opening line as the user model sees it (τ²'s orchestrator's first message)."""

GUIDELINES = f"""You are playing a customer who contacts a store's customer service agent: the other side
of this conversation is the agent. You are the customer, never the agent: do not offer help, ask
the agent for what you want.
- Write one short message at a time, as a customer would.
- Follow the scenario below; say it in your own words rather than repeating it.
- Give a piece of information only when the agent asks for it. Never make up information the
  scenario does not give you: what it does not say, you do not know.
- When what you wanted is done, reply with {STOP} alone. If you are transferred to another
  agent, reply with {TRANSFER}. If the scenario does not tell you enough to go on, reply with
  {OUT_OF_SCOPE}.
"""
"""How to play a user: xpeval's wording of τ²'s user-simulator guidelines (one message at a time,
information only when asked, nothing made up, the three end tokens)."""


def user_system_prompt(scenario: UserScenario) -> str:
    """What the user model is told: how to play a user, then the task's instructions (in a
    `<scenario>` block, as τ²'s prompt puts them)."""
    return f"{GUIDELINES}\n<scenario>\n{scenario.instructions}\n</scenario>"


@dataclass
class SimulatedUser:
    """One user model in one conversation: it remembers what it and the agent said."""

    adapter: TurnTaker
    model: str
    scenario: UserScenario
    stream: bool = False
    _messages: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._messages = [
            SystemMessage(content=user_system_prompt(self.scenario)),
            UserMessage(content=GREETING),
        ]

    async def reply(self, agent_said: str | None = None) -> TurnResult:
        """The user's next message, after the agent said `agent_said` (None: to the greeting).
        Never raises: an adapter that raises is a result with its error."""
        if agent_said is not None:
            self._messages.append(UserMessage(content=agent_said))
        request = TurnRequest(model=self.model, messages=list(self._messages), tools=[], stream=self.stream)
        try:
            result = await self.adapter.turn(request)
        except Exception as exc:  # Adapter.turn never raises; a duck-typed one might
            return TurnResult(
                error=ProviderError(kind="decode", message=f"adapter raised: {describe_exception(exc)}")
            )
        if result.error is None:
            self._messages.append(AssistantMessage(content=result.text or ""))
        return result


__all__ = ["GREETING", "GUIDELINES", "SimulatedUser", "user_system_prompt"]
