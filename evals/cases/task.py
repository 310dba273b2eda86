"""A τ²-style task: a simulated user with a scenario, an environment, and a reward.

A `task` case (docs/cases.md, "Task cases") is played as τ²-bench plays a task: a user model,
told the scenario's `instructions`, talks to the agent; the agent answers with text and with
calls run against the case's environment; the conversation ends when the user model says
`STOP` (τ²'s `###STOP###`) or after `max_turns` user messages. Its reward, as τ²'s for a task
whose reward basis is the database and communication, is 1 when both hold:

- the environment's public state after the agent's calls equals its state after the case's
  expected actions (`expected.ground_truth`) run on a fresh instance (τ² compares the two
  databases' hashes);
- every string of `communicate` appears in one of the agent's messages to the user (τ²'s
  check: lower case, commas removed from the message).

The `script` is what the emulator's user says (one utterance per user turn), so an emulated
run plays the whole pipeline offline; a real user model gets the instructions only.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

STOP = "###STOP###"
"""What the user model writes to end the conversation (τ²'s `STOP`)."""
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
END_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
"""Every token that ends a conversation when the user writes it (τ²'s `UserSimulator.is_stop`)."""

DEFAULT_MAX_TURNS = 10
MAX_TURNS_LIMIT = 50


class UserScenario(BaseModel):
    """Who the simulated user is and what they want."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instructions: str = Field(min_length=1, max_length=8000)
    """What the user model is told: who it is, what it wants, what it knows (never the
    agent's tools or policy)."""
    script: list[str] = Field(min_length=1, max_length=MAX_TURNS_LIMIT)
    """The emulator's user: its utterances in order, then `STOP`. Pipeline only."""

    @field_validator("script")
    @classmethod
    def _plain_utterances(cls, script: list[str]) -> list[str]:
        for index, line in enumerate(script):
            if not line.strip():
                raise ValueError(f"line {index} is blank")
            if any(token in line for token in END_TOKENS):
                raise ValueError(f"line {index} holds an end token; the emulator adds {STOP} itself")
        return script


class Task(BaseModel):
    """The user side of a task case, and what the agent must say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: UserScenario
    communicate: list[str] = Field(default_factory=list)
    """Strings the agent must say to the user (each found in one of its messages)."""
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=MAX_TURNS_LIMIT)
    """User messages at most; a conversation still going after them ends with reward 0
    (τ² rewards a conversation only when the user or the agent ended it)."""

    @field_validator("communicate")
    @classmethod
    def _non_blank(cls, communicate: list[str]) -> list[str]:
        for index, text in enumerate(communicate):
            if not text.strip():
                raise ValueError(f"entry {index} is blank (it would be found in any message)")
        return communicate


def ends_conversation(text: str) -> bool:
    """Whether a user message ends the conversation."""
    return any(token in text for token in END_TOKENS)


__all__ = [
    "DEFAULT_MAX_TURNS",
    "END_TOKENS",
    "MAX_TURNS_LIMIT",
    "OUT_OF_SCOPE",
    "STOP",
    "TRANSFER",
    "Task",
    "UserScenario",
    "ends_conversation",
]
