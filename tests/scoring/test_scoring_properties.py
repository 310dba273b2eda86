"""Properties of scoring: order never matters, a perfect answer is correct, an extra call is not."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._labelled import labelled
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.verdict.scoring import Score, score

BUILTIN = [item.case for item in load_cases()]
OMIT = object()
PROFILE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- perfect answers to the built-in cases -----------------------------------------------------


def _concrete(alternative: Any) -> st.SearchStrategy[Any]:
    """Values that one acceptable alternative accepts, spelled the ways scoring must tolerate."""
    if isinstance(alternative, dict):
        keys = list(alternative)
        return st.tuples(*(_realized(alternative[k]) for k in keys)).map(
            lambda values: {k: v for k, v in zip(keys, values, strict=True) if v is not OMIT}
        )
    if isinstance(alternative, list):
        return st.tuples(*(_concrete(element) for element in alternative)).map(list)
    if isinstance(alternative, str) and alternative.isascii():
        return st.sampled_from(
            [
                alternative,
                alternative.upper(),
                alternative.lower(),
                alternative.replace(" ", "_"),
                f" {alternative}.",
            ]
        )
    if isinstance(alternative, int) and not isinstance(alternative, bool):
        return st.sampled_from([alternative, float(alternative)])
    return st.just(alternative)


def _realized(alternatives: list[Any]) -> st.SearchStrategy[Any]:
    """A value from a list of acceptable values, or OMIT when `""` allows leaving it out."""
    options = [a for a in alternatives if a != ""]
    choices = [_concrete(a) for a in options]
    if "" in alternatives:
        choices.append(st.just(OMIT))
    return st.one_of(choices)


@st.composite
def perfect_turns(draw: st.DrawFn, case: Case) -> list[list[dict[str, Any]]]:
    turns = []
    for turn in case.turns:
        calls = []
        for expected in labelled(turn).calls:
            arguments = {
                key: draw(_realized(alternatives)) for key, alternatives in expected.arguments.items()
            }
            calls.append(
                {"name": expected.name, "arguments": {k: v for k, v in arguments.items() if v is not OMIT}}
            )
        turns.append(draw(st.permutations(calls)))
    return turns


@st.composite
def case_and_perfect_answer(draw: st.DrawFn) -> tuple[Case, list[list[dict[str, Any]]]]:
    case = draw(st.sampled_from(BUILTIN))
    return case, draw(perfect_turns(case))


@PROFILE
@given(case_and_perfect_answer())
def test_a_perfect_answer_in_any_order_and_spelling_is_correct(
    drawn: tuple[Case, list[list[dict[str, Any]]]],
) -> None:
    case, turns = drawn
    result = score(case, turns)
    assert result.correct, result.reason
    assert result.tool_selection_correct and not result.malformed


@PROFILE
@given(case_and_perfect_answer(), st.data())
def test_an_added_unexpected_call_makes_the_answer_wrong(
    drawn: tuple[Case, list[list[dict[str, Any]]]], data: st.DataObject
) -> None:
    case, turns = drawn
    if not case.tools:
        return
    turn = data.draw(st.integers(0, len(turns) - 1))
    tool = data.draw(st.sampled_from(case.tools))
    donors = [c["arguments"] for c in turns[turn] if c["name"] == tool.name]
    extra = {"name": tool.name, "arguments": data.draw(st.sampled_from(donors)) if donors else {}}
    position = data.draw(st.integers(0, len(turns[turn])))
    turns[turn] = [*turns[turn][:position], extra, *turns[turn][position:]]
    result = score(case, turns)
    assert not result.correct
    assert not result.turns[turn].correct


# -- order invariance on arbitrary answers, against a brute-force oracle --------------------------

TOOL = {
    "name": "f",
    "parameters": {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "string"}},
    },
}
A_VALUES, B_VALUES = ["x", "y", "z"], [1, 2]


@st.composite
def expected_call(draw: st.DrawFn) -> dict[str, Any]:
    arguments: dict[str, list[Any]] = {
        "a": draw(st.lists(st.sampled_from(A_VALUES), min_size=1, max_size=3, unique=True))
    }
    b = draw(st.lists(st.sampled_from([*B_VALUES, ""]), min_size=0, max_size=3, unique=True))
    if b:
        arguments["b"] = b
    return {"name": "f", "arguments": arguments}


@st.composite
def actual_call(draw: st.DrawFn) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    if draw(st.integers(0, 9)):  # mostly present: a missing required argument is a rarer error
        arguments["a"] = draw(st.sampled_from([*A_VALUES, "w"]))
    if draw(st.booleans()):
        arguments["b"] = draw(st.sampled_from([*B_VALUES, 3, True]))
    if not draw(st.integers(0, 9)):
        arguments["c"] = "extra"
    return {"name": draw(st.sampled_from(["f", "f", "f", "g"])), "arguments": arguments}


@st.composite
def overlapping_case(draw: st.DrawFn) -> Case:
    calls = draw(st.lists(expected_call(), min_size=1, max_size=4))
    tools = [TOOL, {"name": "g", "parameters": TOOL["parameters"]}]
    return Case.model_validate(
        {
            "id": "prop",
            "category": "simple" if len(calls) == 1 else "parallel",
            "tools": tools if len(calls) == 1 else [TOOL],
            "messages": [{"role": "user", "content": "q"}],
            "expected": {"calls": calls},
        }
    )


def fits(case: Case, call: dict[str, Any], index: int) -> bool:
    expected = labelled(case).calls[index]
    one = case.model_copy(
        update={"category": "simple", "expected": labelled(case).model_copy(update={"calls": [expected]})}
    )
    return score(one, [call]).correct


def oracle(case: Case, calls: list[dict[str, Any]]) -> bool:
    """Correct iff some one-to-one pairing fits every call: checked over all pairings."""
    n = len(labelled(case).calls)
    if len(calls) != n:
        return False
    table = [[fits(case, c, j) for j in range(n)] for c in calls]
    return any(all(table[i][p[i]] for i in range(n)) for p in itertools.permutations(range(n)))


def verdict(result: Score) -> tuple[bool, bool, bool | None, bool]:
    return result.correct, result.tool_selection_correct, result.arguments_correct, result.malformed


@PROFILE
@given(overlapping_case(), st.data())
def test_the_verdict_never_depends_on_call_order(case: Case, data: st.DataObject) -> None:
    calls = data.draw(st.lists(actual_call(), min_size=0, max_size=4))
    shuffled = data.draw(st.permutations(calls))
    assert verdict(score(case, calls)) == verdict(score(case, shuffled))


@PROFILE
@given(overlapping_case(), st.data())
def test_a_verdict_is_correct_exactly_when_some_pairing_fits_every_call(
    case: Case, data: st.DataObject
) -> None:
    # Build answers near the expected ones so that correct verdicts are common too.
    calls = [
        {
            "name": "f",
            "arguments": {
                key: data.draw(st.sampled_from([v for v in alts if v != ""] or [1]))
                for key, alts in expected.arguments.items()
            },
        }
        for expected in labelled(case).calls
    ]
    calls = data.draw(st.permutations(calls))
    if data.draw(st.booleans()):
        calls[data.draw(st.integers(0, len(calls) - 1))] = data.draw(actual_call())
    assert score(case, calls).correct == oracle(case, calls)
