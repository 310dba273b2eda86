"""Scoring follows BFCL's AST-checker rules and never depends on the order of the calls."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests._labelled import labelled
from xpeval.adapters.contract import ToolCall
from xpeval.evals.cases import Case
from xpeval.evals.verdict.scoring import score

STOCK_TOOL = {
    "name": "get_closing_price",
    "description": "Closing price of a stock on a day.",
    "parameters": {
        "type": "object",
        "properties": {
            "company": {"type": "string"},
            "day": {"type": "string", "format": "date"},
            "market": {"type": "string"},
        },
        "required": ["company", "day"],
    },
}


def make_case(
    expected_calls: list[dict[str, Any]] | None,
    *,
    tools: list[dict[str, Any]] | None = None,
    category: str | None = None,
    **extra: Any,
) -> Case:
    calls = expected_calls or []
    if category is None:
        category = "irrelevance" if not calls else ("simple" if len(calls) == 1 else "parallel")
    expected = {"no_call": True} if not calls else {"calls": calls}
    return Case.model_validate(
        {
            "id": "t",
            "category": category,
            "tools": tools or [STOCK_TOOL],
            "messages": [{"role": "user", "content": "question"}],
            "expected": expected,
            **extra,
        }
    )


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def one_arg_tool(name: str, schema: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    return {
        "name": name,
        "parameters": {"type": "object", "properties": {"x": schema}, "required": ["x"] if required else []},
    }


def verdict_on_x(schema: dict[str, Any], acceptable: list[Any], value: Any) -> bool:
    case = make_case([call("f", x=acceptable)], tools=[one_arg_tool("f", schema, required=False)])
    return score(case, [call("f", x=value)]).correct


# -- one call ----------------------------------------------------------------------------------


def test_an_answer_with_acceptable_values_is_correct() -> None:
    case = make_case(
        [call("get_closing_price", company=["Initech"], day=["2024-03-01"], market=["NYSE", ""])]
    )
    result = score(case, [call("get_closing_price", company="Initech", day="2024-03-01")])
    assert result.correct and result.reason is None
    assert result.tool_selection_correct and result.arguments_correct is True


def test_calling_another_function_is_a_tool_selection_error() -> None:
    other = {"name": "get_opening_price", "parameters": STOCK_TOOL["parameters"]}
    case = make_case(
        [call("get_closing_price", company=["Initech"], day=["2024-03-01"])],
        tools=[STOCK_TOOL, other],
        category="multiple",
    )
    result = score(case, [call("get_opening_price", company="Initech", day="2024-03-01")])
    assert not result.correct
    assert not result.tool_selection_correct and result.arguments_correct is None
    assert "get_closing_price" in str(result.reason)


def test_a_missing_required_argument_fails() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    result = score(case, [call("get_closing_price", company="Initech")])
    assert not result.correct
    assert result.tool_selection_correct and result.arguments_correct is False
    assert "missing required argument 'day'" in str(result.reason)


def test_an_argument_outside_the_schema_fails() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    result = score(case, [call("get_closing_price", company="Initech", day="2024-03-01", currency="USD")])
    assert not result.correct and "not in the tool's schema" in str(result.reason)


def test_an_argument_absent_from_the_expected_answer_fails() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    result = score(case, [call("get_closing_price", company="Initech", day="2024-03-01", market="NYSE")])
    assert not result.correct and "not in the expected answer" in str(result.reason)


def test_an_expected_argument_may_be_left_out_only_when_marked_optional() -> None:
    optional = make_case(
        [call("get_closing_price", company=["Initech"], day=["2024-03-01"], market=["", "NYSE"])]
    )
    needed = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"], market=["NYSE"])])
    answer = [call("get_closing_price", company="Initech", day="2024-03-01")]
    assert score(optional, answer).correct
    result = score(needed, answer)
    assert not result.correct and "missing argument 'market'" in str(result.reason)


def test_a_value_outside_the_acceptable_values_fails() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    result = score(case, [call("get_closing_price", company="Initrode", day="2024-03-01")])
    assert not result.correct and "'company'" in str(result.reason)


# -- values ------------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["new york", "NEW YORK", "New-York", "New_York.", "new,york", "NewYork*^/"])
def test_strings_match_ignoring_case_spaces_and_bfcl_punctuation(given: str) -> None:
    assert verdict_on_x({"type": "string"}, ["New York"], given)


@pytest.mark.parametrize("given", ["New York!", "New York City", "Nueva York", "New:York"])
def test_strings_differing_in_anything_else_do_not_match(given: str) -> None:
    assert not verdict_on_x({"type": "string"}, ["New York"], given)


def test_single_and_double_quotes_are_the_same_character() -> None:
    assert verdict_on_x({"type": "string"}, ['say "hi"'], "say 'hi'")


def test_an_int_is_accepted_where_a_float_is_expected() -> None:
    assert verdict_on_x({"type": "number"}, [5.0], 5)
    assert verdict_on_x({"type": "number"}, [2.5], 2.5)
    assert not verdict_on_x({"type": "number"}, [2.5], 2)


def test_an_integral_float_is_the_same_json_number_as_an_int() -> None:
    assert verdict_on_x({"type": "integer"}, [5], 5.0)
    assert not verdict_on_x({"type": "integer"}, [5], 5.5)


def test_booleans_are_not_numbers() -> None:
    assert not verdict_on_x({"type": "integer"}, [1], True)
    assert not verdict_on_x({"type": "boolean"}, [True], 1)
    assert not verdict_on_x({"type": "integer"}, [0], False)
    assert verdict_on_x({"type": "boolean"}, [False], False)


def test_numbers_and_numeric_strings_are_different_values() -> None:
    assert not verdict_on_x({"type": "string"}, ["5"], 5)
    assert not verdict_on_x({"type": "integer"}, [5], "5")


def test_null_matches_only_null() -> None:
    nullable = {"type": ["string", "null"]}
    assert verdict_on_x(nullable, [None], None)
    assert not verdict_on_x(nullable, [None], "null")
    assert not verdict_on_x(nullable, [None], "")
    assert not verdict_on_x(nullable, ["x"], None)


def test_lists_match_element_by_element_in_order() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    assert verdict_on_x(schema, [["Red", "blue"]], ["red", "BLUE"])
    assert not verdict_on_x(schema, [["red", "blue"]], ["blue", "red"])
    assert verdict_on_x(schema, [["red", "blue"], ["blue", "red"]], ["blue", "red"])
    assert not verdict_on_x(schema, [["red", "blue"]], ["red"])


def test_nested_objects_match_key_by_key_with_their_own_acceptable_values() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "zip": {"type": "string"}, "geo": {"type": "object"}},
    }
    acceptable = [
        {
            "city": ["Paris", "Paris, France"],
            "zip": ["", "75001"],
            "geo": ["", {"lat": [48.86], "lon": [2.35]}],
        }
    ]
    assert verdict_on_x(schema, acceptable, {"city": "paris france"})
    assert verdict_on_x(
        schema, acceptable, {"city": "Paris", "zip": "75001", "geo": {"lat": 48.86, "lon": 2.35}}
    )
    assert not verdict_on_x(schema, acceptable, {"city": "Paris", "country": "FR"})
    assert not verdict_on_x(schema, acceptable, {"zip": "75001"})
    assert not verdict_on_x(schema, acceptable, {"city": "Paris", "geo": {"lat": 48.86}})
    assert not verdict_on_x(schema, acceptable, "Paris")


def test_lists_of_objects_match_object_by_object() -> None:
    schema = {"type": "array", "items": {"type": "object"}}
    acceptable = [[{"sku": ["A-1"], "qty": [2]}, {"sku": ["B-2"], "qty": [1, ""]}]]
    assert verdict_on_x(schema, acceptable, [{"sku": "a1", "qty": 2}, {"sku": "B-2"}])
    assert not verdict_on_x(schema, acceptable, [{"sku": "B-2"}, {"sku": "a1", "qty": 2}])


# -- irrelevance, empty and malformed answers ----------------------------------------------------


def test_irrelevance_is_correct_only_when_no_call_is_made() -> None:
    case = make_case(None)
    assert score(case, []).correct
    result = score(case, [call("get_closing_price", company="Initech", day="2024-03-01")])
    assert not result.correct and result.irrelevance and not result.tool_selection_correct
    assert "expected no call" in str(result.reason)


def test_an_empty_call_list_never_counts_as_a_correct_call() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"], market=[""])])
    result = score(case, [])
    assert not result.correct and not result.tool_selection_correct and "got none" in str(result.reason)


def test_a_call_whose_arguments_could_not_be_parsed_is_malformed_and_wrong() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    broken = ToolCall(
        name="get_closing_price", raw_arguments='{"company": "Init', parse_error="unterminated string"
    )
    result = score(case, [broken])
    assert not result.correct and result.malformed and result.tool_selection_correct
    assert "unparseable" in str(result.reason)


def test_plain_dicts_may_carry_arguments_as_json_text() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    good = {"name": "get_closing_price", "arguments": '{"company": "Initech", "day": "2024-03-01"}'}
    bad = {"name": "get_closing_price", "arguments": '{"company": '}
    assert score(case, [good]).correct
    result = score(case, [bad])
    assert not result.correct and result.malformed


def test_canonical_tool_calls_and_plain_dicts_score_alike() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    as_model = ToolCall(
        id="c1", name="get_closing_price", arguments={"company": "Initech", "day": "2024-03-01"}
    )
    assert score(case, [as_model]) == score(
        case, [call("get_closing_price", company="Initech", day="2024-03-01")]
    )


def test_arguments_are_judged_against_a_root_ref_schema() -> None:
    tool = {
        "name": "f",
        "parameters": {
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
            },
        },
    }
    case = make_case([call("f", x=[1])], tools=[tool])
    assert score(case, [call("f", x=1)]).correct
    assert "not in the tool's schema" in str(score(case, [call("f", x=1, y=2)]).reason)


# -- several calls -----------------------------------------------------------------------------

DAY1, DAY2 = ["2024-01-02", "01/02/2024"], ["2024-02-01", "02/01/2024"]


def parallel_178_style_case() -> Case:
    """Four expected calls where the first accepts either company: overlapping answers."""
    return make_case(
        [
            call("get_closing_price", company=["Initech", "Globex"], day=DAY1, market=["NYSE", ""]),
            call("get_closing_price", company=["Initech"], day=DAY2, market=["NYSE", ""]),
            call("get_closing_price", company=["Globex"], day=DAY1, market=["NYSE", ""]),
            call("get_closing_price", company=["Globex"], day=DAY2, market=["NYSE", ""]),
        ]
    )


PARALLEL_178_ANSWER = [
    call("get_closing_price", company="Initech", day="2024-01-02"),
    call("get_closing_price", company="Initech", day="2024-02-01"),
    call("get_closing_price", company="Globex", day="2024-01-02"),
    call("get_closing_price", company="Globex", day="2024-02-01"),
]


def first_fit_verdict(case: Case, calls: list[dict[str, Any]]) -> bool:
    """BFCL's `parallel_function_checker_no_order`: each expected call takes the first unused fit."""
    used: set[int] = set()
    for expected in labelled(case).calls:
        single = case.model_copy(update={"expected": labelled(case).model_copy(update={"calls": [expected]})})
        fit = next((i for i, c in enumerate(calls) if i not in used and score(single, [c]).correct), None)
        if fit is None:
            return False
        used.add(fit)
    return len(used) == len(calls)


def test_parallel_178_style_overlap_is_scored_the_same_in_every_order() -> None:
    case = parallel_178_style_case()
    orders = list(itertools.permutations(PARALLEL_178_ANSWER))
    # The trap is real: first-fit pairing passes some orders of this answer and fails others.
    first_fit = {first_fit_verdict(case, list(order)) for order in orders}
    assert first_fit == {True, False}
    assert all(score(case, list(order)).correct for order in orders)


def test_parallel_calls_may_come_in_any_order() -> None:
    case = make_case(
        [
            call("get_closing_price", company=["Initech"], day=DAY1),
            call("get_closing_price", company=["Globex"], day=DAY1),
        ]
    )
    answer = [
        call("get_closing_price", company="Globex", day="01/02/2024"),
        call("get_closing_price", company="Initech", day="2024-01-02"),
    ]
    assert score(case, answer).correct


def test_a_repeated_call_does_not_stand_in_for_a_missing_one() -> None:
    case = make_case(
        [
            call("get_closing_price", company=["Initech"], day=DAY1),
            call("get_closing_price", company=["Globex"], day=DAY1),
        ]
    )
    answer = [call("get_closing_price", company="Initech", day="2024-01-02")] * 2
    result = score(case, answer)
    assert not result.correct and result.tool_selection_correct and result.arguments_correct is False


def test_one_extra_call_makes_a_parallel_answer_wrong() -> None:
    case = make_case(
        [
            call("get_closing_price", company=["Initech"], day=DAY1),
            call("get_closing_price", company=["Globex"], day=DAY1),
        ]
    )
    answer = [
        call("get_closing_price", company="Initech", day="2024-01-02"),
        call("get_closing_price", company="Globex", day="2024-01-02"),
        call("get_closing_price", company="Globex", day="2024-02-01"),
    ]
    result = score(case, answer)
    assert not result.correct and "expected 2 call(s)" in str(result.reason)


# -- turns -------------------------------------------------------------------------------------


def two_turn_case() -> Case:
    return make_case(
        [call("get_closing_price", company=["Initech"], day=DAY1)],
        category="multi_turn",
        follow_ups=[
            {
                "messages": [{"role": "user", "content": "and Globex?"}],
                "expected": {"calls": [call("get_closing_price", company=["Globex"], day=DAY1)]},
            },
            {"messages": [{"role": "user", "content": "thanks"}], "expected": {"no_call": True}},
        ],
        tool_outputs=[{"tool": "get_closing_price", "output": {"close": 10.5}}],
    )


def test_a_multi_turn_case_is_scored_turn_by_turn() -> None:
    case = two_turn_case()
    right = [
        [call("get_closing_price", company="Initech", day="2024-01-02")],
        [call("get_closing_price", company="Globex", day="2024-01-02")],
        [],
    ]
    assert score(case, right).correct
    wrong = [right[0], [call("get_closing_price", company="Initech", day="2024-01-02")], []]
    result = score(case, wrong)
    assert not result.correct and str(result.reason).startswith("turn 1:")
    assert [t.correct for t in result.turns] == [True, False, True]
    assert not result.irrelevance


def test_a_call_in_a_turn_that_expects_none_makes_the_case_wrong() -> None:
    case = two_turn_case()
    calls = [
        [call("get_closing_price", company="Initech", day="2024-01-02")],
        [call("get_closing_price", company="Globex", day="2024-01-02")],
        [call("get_closing_price", company="Globex", day="2024-01-02")],
    ]
    result = score(case, calls)
    assert not result.correct and str(result.reason).startswith("turn 2: expected no call")


def test_missing_trailing_turns_count_as_turns_without_calls() -> None:
    result = score(two_turn_case(), [[call("get_closing_price", company="Initech", day="2024-01-02")]])
    assert not result.correct and str(result.reason).startswith("turn 1:")


def test_a_flat_call_list_for_a_multi_turn_case_is_refused() -> None:
    with pytest.raises(ValueError, match="one list of calls per turn"):
        score(two_turn_case(), [call("get_closing_price", company="Initech", day="2024-01-02")])


def test_a_deeply_nested_wrong_value_still_gets_a_verdict_and_a_reason() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    result = score(case, [call("get_closing_price", company=deep, day="2024-03-01")])
    assert not result.correct and "'company'" in str(result.reason)


def test_something_that_is_not_a_call_is_a_clear_type_error() -> None:
    case = make_case([call("get_closing_price", company=["Initech"], day=["2024-03-01"])])
    with pytest.raises(TypeError, match="a tool call must be a ToolCall or a mapping"):
        score(case, ["get_closing_price"])  # type: ignore[arg-type]
