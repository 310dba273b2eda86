"""What the emulator answers in a task case: both sides of a conversation that goes right.

A task's requests come from two models through one adapter, in a fixed order (the user model
first, then the agent until it answers with text, then the user again), so the emulator serves
one list of replies in that order:

- the user's lines are the task's `user.script`, then `###STOP###`;
- the agent answers each line but the last with a short text, and the last one with the
  expected actions (`expected.ground_truth`, all in one step) and then a text holding every
  `communicate` string.

An emulated task therefore earns reward 1 when the pipeline works (the loop, the environment,
the recording, the reward); it measures no model (its rows are `emulated`).
"""

from __future__ import annotations

from xpeval.adapters.contract import ToolCall, TurnResult, Usage
from xpeval.evals.cases import Case
from xpeval.evals.cases.task import STOP

AGENT_ACK = "Thank you. Let me look into that."
AGENT_DONE = "All done."


def task_replies(case: Case) -> list[TurnResult]:
    """The emulator's replies for a task case, in the order its conversation asks for them."""
    if case.task is None or case.expected is None:
        raise ValueError(f"case {case.id} is not a task")
    script = case.task.user.script
    actions = case.expected.ground_truth or []
    replies: list[TurnResult] = []
    for index, line in enumerate(script):
        usage = Usage(input_tokens=10 * (index + 1), output_tokens=5, total_tokens=10 * (index + 1) + 5)
        replies.append(TurnResult(text=line, usage=usage))
        if index < len(script) - 1:
            replies.append(TurnResult(text=AGENT_ACK, usage=usage))
            continue
        if actions:
            calls = [
                ToolCall(id=f"call_{index}_{n}", name=action.name, arguments=dict(action.arguments))
                for n, action in enumerate(actions)
            ]
            replies.append(TurnResult(tool_calls=calls, usage=usage))
        replies.append(TurnResult(text=" ".join([AGENT_DONE, *case.task.communicate]), usage=usage))
    replies.append(TurnResult(text=STOP, usage=Usage(input_tokens=5, output_tokens=1, total_tokens=6)))
    return replies


__all__ = ["AGENT_ACK", "AGENT_DONE", "task_replies"]
