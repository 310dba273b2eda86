"""The state verdict: a case with an environment judged by what its calls leave, as BFCL does.

Mirrors `multi_turn_checker` of bfcl-eval 2026.3.23 (`eval_checker/multi_turn_eval/`):

- the model's calls run turn after turn on fresh instances of the environment's classes, and
  each turn's ground truth on another set of fresh instances (both carried across turns);
- an episode that stopped before its last turn (BFCL's force quit at the step limit) fails;
- a turn whose ground truth makes calls fails when the model made none (calls whose arguments
  could not be read are not run, as BFCL drops what it cannot decode);
- a turn whose ground truth is empty is not judged; the model's calls in it still run, so the
  next judged turn's state sees them (BFCL never runs its irrelevance checker on these turns and
  never reads an entry's `excluded_function`: xpeval follows the package);
- after every judged turn, every public attribute (name not starting with `_`) of every
  ground-truth instance equals the model instance's, and the ground truth's results of the
  turn are an unordered subsequence of the model's results of all turns so far.

The verdict is all-or-nothing (the first failing turn decides, as BFCL's). Each turn's own
outcome is reported beside it (`turns`, "per-turn credit"), never mixed into `correct`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xpeval.evals.cases.model import Case
from xpeval.evals.runtime.environment import DEFAULT_LIMITS, Limits, ToolEnvironment
from xpeval.evals.verdict.calls import CallLike, read_call


@dataclass(frozen=True)
class StateVerdict:
    """The verdict on an environment case, and each turn's own outcome."""

    correct: bool
    reason: str | None
    """Why it is wrong (the first failing turn, as BFCL reports it); None when correct."""
    turns: tuple[bool | None, ...]
    """Per turn: whether it passed its own checks; None for a turn the ground truth leaves
    empty (not judged). Credit beside the verdict, not part of it."""
    malformed: bool

    @property
    def credit(self) -> str:
        """`passed/judged` turns, e.g. `3/4`."""
        judged = [t for t in self.turns if t is not None]
        return f"{sum(judged)}/{len(judged)}"


def state_verdict(
    case: Case, calls_per_turn: Sequence[Sequence[CallLike]], limits: Limits = DEFAULT_LIMITS
) -> StateVerdict:
    """Judge an environment case from the model's calls, one list per turn (see the module docstring)."""
    if case.environment is None:
        raise ValueError(f"case {case.id} has no environment: it is scored by its calls")
    model_env = ToolEnvironment(case.environment, limits)
    truth_env = ToolEnvironment(case.environment, limits)
    model_results: list[str] = []
    outcomes: list[bool | None] = []
    reasons: list[str] = []
    malformed = False
    for turn in case.turns:
        played = turn.index < len(calls_per_turn)
        calls = [read_call(call) for call in (calls_per_turn[turn.index] if played else [])]
        malformed |= any(call.parse_error is not None for call in calls)
        runnable = [call for call in calls if call.parse_error is None]
        model_results += [model_env.call(call.name, call.arguments).text for call in runnable]
        truth = (turn.expected.ground_truth or []) if turn.expected is not None else []
        truth_results = [truth_env.call(call.name, call.arguments).text for call in truth]
        if not played:
            outcomes.append(False)
            reasons.append(f"turn {turn.index}: not played (the episode stopped before it)")
            continue
        if not truth:
            outcomes.append(None)
            continue
        problem = _turn_problem(runnable, truth, model_env, truth_env, model_results, truth_results)
        outcomes.append(problem is None)
        if problem is not None:
            reasons.append(f"turn {turn.index}: {problem}")
    if len(calls_per_turn) < len(case.turns):  # BFCL fails a force-terminated entry before any check
        reasons.insert(0, f"the episode stopped after {len(calls_per_turn)} of {len(case.turns)} turns")
    return StateVerdict(
        correct=not reasons,
        reason=reasons[0] if reasons else None,
        turns=tuple(outcomes),
        malformed=malformed,
    )


def _turn_problem(
    runnable: Sequence[Any],
    truth: Sequence[Any],
    model_env: ToolEnvironment,
    truth_env: ToolEnvironment,
    model_results: list[str],
    truth_results: list[str],
) -> str | None:
    if not runnable:
        return f"no call, where the ground truth makes {len(truth)}"
    differences = state_differences(model_env, truth_env)
    if differences:
        return "state differs from the ground truth's: " + ", ".join(differences)
    missing = missing_results(truth_results, model_results)
    if missing:
        first = _short(missing[0])
        return f"{len(missing)} ground-truth result(s) missing from the model's results so far: {first}"
    return None


def state_differences(model_env: ToolEnvironment, truth_env: ToolEnvironment) -> list[str]:
    """`Class.attribute` for every public attribute of a ground-truth instance that the model's
    instance does not equal (BFCL's `state_checker`)."""
    differences = []
    for name, truth_instance in truth_env.instances.items():
        model_instance = model_env.instances[name]
        for attribute, value in vars(truth_instance).items():
            if attribute.startswith("_"):
                continue
            try:
                equal = bool(getattr(model_instance, attribute) == value)
            except Exception:  # an attribute without a working __eq__ cannot be shown equal
                equal = False
            if not equal:
                differences.append(f"{name}.{attribute}")
    return differences


def missing_results(wanted: Sequence[str], results: Sequence[str]) -> list[str]:
    """The items of `wanted` not found in `results`, each found item consuming one occurrence
    (BFCL's `_is_subsequence_unordered`)."""
    remaining = list(results)
    missing = []
    for item in wanted:
        try:
            remaining.remove(item)
        except ValueError:
            missing.append(item)
    return missing


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["StateVerdict", "missing_results", "state_differences", "state_verdict"]
