"""Score a model's tool calls against a case: BFCL's AST-checker rules, order-free.

`score(case, tool_calls)` is pure. Per turn, a turn is correct when:
- it expects no call (irrelevance) and the model made none; an empty call list never counts
  as a correct call when calls are expected;
- it expects any call (relevance) and the model made one or more, every one readable (BFCL
  passes any call that decodes);
- otherwise the calls and the expected calls pair up one to one, where a call fits an expected
  call when the function names are equal, every argument the tool's schema requires is present,
  every argument given is both in the schema and in the expected answer, every given value is
  among its acceptable values (`xpeval.evals.cases.acceptable`), and every expected argument left out
  has `""` (optional) among its acceptable values. A call whose arguments could not be parsed
  fits nothing (and marks the turn malformed). A case imported from BFCL also holds BFCL's
  type rules (`20.0` is no `integer`: `xpeval.evals.verdict.bfcl_types`).
Pairing is a maximum bipartite matching over the "fits" relation, so the verdict never
depends on the order of the calls (BFCL's first-fit pairing fails `parallel_178` in one order
and passes it in another). A case is correct when all its turns are.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from xpeval.evals.cases.acceptable import OPTIONAL, value_acceptable
from xpeval.evals.cases.model import is_multi_step
from xpeval.evals.cases.schema_root import root_properties, root_required
from xpeval.evals.verdict.bfcl_types import bfcl_type_error, is_bfcl_case
from xpeval.evals.verdict.calls import CallLike, ReadCall, read_call

if TYPE_CHECKING:
    from xpeval.evals.cases.model import Case, Expected, ExpectedCall


class TurnScore(BaseModel):
    """The verdict on one turn."""

    model_config = ConfigDict(frozen=True)

    turn: int
    correct: bool
    reason: str | None
    """Why the turn is wrong; None when it is correct."""
    tool_selection_correct: bool
    """The called function names equal the expected ones as a multiset (none when none expected)."""
    arguments_correct: bool | None
    """Whether the arguments are right, judged only when the selection is right and calls
    were expected; None otherwise."""
    expected_calls: int
    actual_calls: int
    malformed: bool
    """Some call's arguments could not be parsed."""


class Score(BaseModel):
    """The verdict on a case: correct when every turn is."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    category: str
    correct: bool
    reason: str | None
    """The first wrong turn's reason (prefixed with its turn number in multi-turn cases)."""
    tool_selection_correct: bool
    arguments_correct: bool | None
    """False when any judged turn's arguments are wrong; None when no turn could be judged."""
    irrelevance: bool
    """The case expects no call in any turn: its correctness is a refusal to call."""
    malformed: bool
    turns: tuple[TurnScore, ...]


def score(case: Case, tool_calls: Sequence[CallLike] | Sequence[Sequence[CallLike]]) -> Score:
    """Score the calls a model made on `case`.

    `tool_calls` is the flat list of calls for a one-turn case, or one list per turn (in turn
    order) for any case; a multi-turn case given a flat non-empty list is a programming error.
    Missing trailing turns count as turns without calls.
    """
    if not case.labelled:
        raise ValueError(f"case {case.id} is unlabelled: it is judged against a reference row, not scored")
    per_turn = _split_turns(case, tool_calls)
    turns = case.turns  # made anew at each read
    turn_scores = tuple(
        score_turn(
            case,
            turn.expected,  # type: ignore[arg-type]  # a labelled case expects something in every turn
            per_turn[turn.index] if turn.index < len(per_turn) else [],
            index=turn.index,
        )
        for turn in turns
    )
    multi = len(turn_scores) > 1
    first_wrong = next((t for t in turn_scores if not t.correct), None)
    reason = None
    if first_wrong is not None:
        reason = f"turn {first_wrong.turn}: {first_wrong.reason}" if multi else first_wrong.reason
    judged = [t.arguments_correct for t in turn_scores if t.arguments_correct is not None]
    return Score(
        case_id=case.id,
        category=case.category,
        correct=first_wrong is None,
        reason=reason,
        tool_selection_correct=all(t.tool_selection_correct for t in turn_scores),
        arguments_correct=all(judged) if judged else None,
        irrelevance=all(t.expected is not None and t.expected.no_call for t in turns),
        malformed=any(t.malformed for t in turn_scores),
        turns=turn_scores,
    )


def episode_verdict(
    case: Case,
    calls_per_turn: Sequence[Sequence[CallLike]],
    failed: bool,
    *,
    dropped_calls: int = 0,
    said: Sequence[str] | None = None,
    ended: str | None = None,
) -> dict[str, Any]:
    """A result row's verdict fields (`correct`, `tool_selection_correct`, `arguments_correct`,
    `irrelevance`, `malformed`, `reason`) from the calls a row keeps, one list per turn, whether
    the episode ended in an error, and how many calls the row bound dropped. The runner scores
    the row it writes (its calls as kept: an argument cut to the row bound is the cut text,
    which matches no expected value), and the gate's chain of custody scores it again from the
    same calls (`xpeval.evals.verdict.custody`): both go through here, so both agree.

    A row that dropped calls is never correct: what the dropped calls were is gone.

    An unlabelled case is not scored (it is judged against a reference row): only whether a call
    was malformed. A single-step case is scored on its first turn's calls. A task case is scored
    by its reward (`xpeval.evals.verdict.task_reward`), from its calls, what the agent `said` and
    how its conversation `ended` (both kept in the row)."""
    if not case.labelled:
        malformed = any(read_call(c).parse_error is not None for turn in calls_per_turn for c in turn)
        return {
            "correct": None,
            "tool_selection_correct": None,
            "arguments_correct": None,
            "irrelevance": False,
            "malformed": malformed,
            "reason": None,
        }
    if case.task is not None:
        return _task_fields(case, calls_per_turn, failed, dropped_calls, said or [], ended)
    if case.environment is not None:
        return _state_fields(case, calls_per_turn, failed)
    turns = [list(turn) for turn in calls_per_turn]
    verdict = score(case, turns if is_multi_step(case.category) else (turns[0] if turns else []))
    if dropped_calls:
        return {
            "correct": False,
            "tool_selection_correct": False,
            "arguments_correct": None,
            "irrelevance": verdict.irrelevance,
            "malformed": verdict.malformed,
            "reason": f"{dropped_calls} calls past the {sum(map(len, turns))} the row keeps: never correct",
        }
    return {
        "correct": verdict.correct and not failed,
        "tool_selection_correct": verdict.tool_selection_correct and not failed,
        "arguments_correct": None if failed else verdict.arguments_correct,
        "irrelevance": verdict.irrelevance,
        "malformed": verdict.malformed,
        "reason": verdict.reason,
    }


def _state_fields(case: Case, calls_per_turn: Sequence[Sequence[CallLike]], failed: bool) -> dict[str, Any]:
    """An environment case's row fields: the state verdict (`xpeval.evals.verdict.state`); its
    per-turn credit goes into the reason, beside the all-or-nothing `correct`."""
    from xpeval.evals.verdict.state import state_verdict

    if failed:  # the episode's error is its reason; nothing is executed for it
        malformed = any(read_call(c).parse_error is not None for turn in calls_per_turn for c in turn)
        return {
            "correct": False,
            "tool_selection_correct": None,
            "arguments_correct": None,
            "irrelevance": False,
            "malformed": malformed,
            "reason": None,
        }
    verdict = state_verdict(case, calls_per_turn)
    reason = None if verdict.correct else f"{verdict.reason} (turns passed: {verdict.credit})"
    return {
        "correct": verdict.correct,
        "tool_selection_correct": None,
        "arguments_correct": None,
        "irrelevance": False,
        "malformed": verdict.malformed,
        "reason": reason,
    }


def _task_fields(
    case: Case,
    calls_per_turn: Sequence[Sequence[CallLike]],
    failed: bool,
    dropped_calls: int,
    said: Sequence[str],
    ended: str | None,
) -> dict[str, Any]:
    """A task case's row fields: `correct` is its reward (1 or 0); the reason says what missed."""
    from xpeval.evals.verdict.task_reward import task_reward

    calls = [call for turn in calls_per_turn for call in turn]
    fields: dict[str, Any] = {
        "correct": False,
        "tool_selection_correct": None,
        "arguments_correct": None,
        "irrelevance": False,
        "malformed": any(read_call(c).parse_error is not None for c in calls),
        "reason": None,
    }
    if failed:  # the episode's error is its reason; nothing is executed for it
        return fields
    if dropped_calls:
        fields["reason"] = f"{dropped_calls} calls past the {len(calls)} the row keeps: never correct"
        return fields
    reward = task_reward(case, calls, said, ended)
    fields["correct"] = reward.reward == 1
    fields["reason"] = None if reward.reward == 1 else f"reward 0: {reward.reason}"
    return fields


def score_turn(
    case: Case, expected: Expected, tool_calls: Sequence[CallLike], *, index: int = 0
) -> TurnScore:
    """Score one turn's calls against what that turn expects (see the module docstring)."""
    calls = [read_call(call) for call in tool_calls]

    def verdict(correct: bool, reason: str | None, selection: bool, arguments: bool | None) -> TurnScore:
        return TurnScore(
            turn=index,
            correct=correct,
            reason=reason,
            tool_selection_correct=selection,
            arguments_correct=arguments,
            expected_calls=len(expected.calls),
            actual_calls=len(calls),
            malformed=any(c.parse_error is not None for c in calls),
        )

    if expected.no_call:
        reason = f"expected no call, got {len(calls)}: {_names(calls)}" if calls else None
        return verdict(not calls, reason, not calls, None)
    if expected.any_call:
        unread = [call.name for call in calls if call.parse_error is not None]
        if not calls or unread:
            why = (
                "expected a call of any tool, got none"
                if not calls
                else f"unparseable call(s): {', '.join(unread)}"
            )
            return verdict(False, why, False, None)
        return verdict(True, None, True, None)
    expected_names = [call.name for call in expected.calls]
    if not calls:
        return verdict(
            False,
            f"expected {len(expected_names)} call(s) ({', '.join(expected_names)}), got none",
            False,
            None,
        )
    selection = Counter(call.name for call in calls) == Counter(expected_names)
    mismatch = [[_call_mismatch(case, call, wanted) for wanted in expected.calls] for call in calls]
    pairs = _maximum_matching([[m is None for m in row] for row in mismatch])
    correct = len(calls) == len(expected.calls) == len(pairs)
    reason = None if correct else _explain(calls, expected_names, mismatch, pairs)
    return verdict(correct, reason, selection, correct if selection else None)


def _split_turns(
    case: Case, tool_calls: Sequence[CallLike] | Sequence[Sequence[CallLike]]
) -> list[Sequence[CallLike]]:
    if any(isinstance(item, list | tuple) for item in tool_calls):
        if not all(isinstance(item, list | tuple) for item in tool_calls):
            raise ValueError("tool_calls mixes calls and per-turn lists")
        return [list(turn) for turn in tool_calls]  # type: ignore[arg-type]
    count = 1 + len(case.follow_ups)  # len(case.turns), without making them
    if count > 1 and tool_calls:
        raise ValueError(f"case {case.id} has {count} turns: give one list of calls per turn")
    return [tool_calls]  # type: ignore[list-item]


def _call_mismatch(case: Case, call: ReadCall, wanted: ExpectedCall) -> str | None:
    """Why `call` does not fit the expected call `wanted`; None when it fits."""
    if call.name != wanted.name:
        return f"called {call.name!r}, expected {wanted.name!r}"
    if call.parse_error is not None:
        return f"{call.name}: unparseable arguments ({call.parse_error})"
    tool = case.tool(call.name)
    schema = tool.parameters if tool is not None else {}
    for argument in root_required(schema):
        if argument not in call.arguments:
            return f"{call.name}: missing required argument {argument!r}"
    properties = root_properties(schema)
    for argument, value in call.arguments.items():
        if argument not in properties:
            return f"{call.name}: unexpected argument {argument!r} (not in the tool's schema)"
        if argument not in wanted.arguments:
            return f"{call.name}: unexpected argument {argument!r} (not in the expected answer)"
        if not value_acceptable(value, wanted.arguments[argument]):
            return (
                f"{call.name}: argument {argument!r} = {_short(value)} is not one of "
                f"{_short(wanted.arguments[argument])}"
            )
        if is_bfcl_case(case.origin):
            type_error = bfcl_type_error(value, properties[argument], wanted.arguments[argument])
            if type_error is not None:
                return f"{call.name}: argument {argument!r}: {type_error}"
    for argument, alternatives in wanted.arguments.items():
        if argument not in call.arguments and OPTIONAL not in alternatives:
            return f"{call.name}: missing argument {argument!r} (expected one of {_short(alternatives)})"
    return None


def _maximum_matching(fits: list[list[bool]]) -> dict[int, int]:
    """Maximum bipartite matching (Kuhn's augmenting paths): expected index -> call index.

    The graphs are a handful of calls, so the O(V*E) algorithm is instant; scipy or networkx
    would add a heavy dependency for ten lines.
    """
    owner: dict[int, int] = {}  # expected index -> call index

    def augment(call: int, visited: set[int]) -> bool:
        for wanted, ok in enumerate(fits[call]):
            if ok and wanted not in visited:
                visited.add(wanted)
                if wanted not in owner or augment(owner[wanted], visited):
                    owner[wanted] = call
                    return True
        return False

    for call in range(len(fits)):
        augment(call, set())
    return owner


def _explain(
    calls: list[ReadCall], expected_names: list[str], mismatch: list[list[str | None]], pairs: dict[int, int]
) -> str:
    if len(calls) != len(expected_names):
        return (
            f"expected {len(expected_names)} call(s) ({', '.join(expected_names)}), "
            f"got {len(calls)} ({_names(calls)})"
        )
    matched_calls = set(pairs.values())
    for wanted, name in enumerate(expected_names):
        if wanted in pairs:
            continue
        same_name = [i for i, call in enumerate(calls) if i not in matched_calls and call.name == name]
        if not same_name:
            return f"no call to {name!r} left to match (got {_names(calls)})"
        return str(mismatch[same_name[0]][wanted])
    return "calls do not match the expected calls"


def _names(calls: list[ReadCall]) -> str:
    return ", ".join(call.name for call in calls)


def _short(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):  # a pathologically deep or circular value still gets a reason
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["CallLike", "Score", "TurnScore", "episode_verdict", "score", "score_turn"]
