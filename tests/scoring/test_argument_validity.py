"""A returned call's arguments are judged against its tool's original JSON Schema, bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.vendors._vendors import perfect, run_vendors
from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.evals.cases import Case
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.results.load import load_run
from xpeval.evals.verdict.argument_validity import validate_call
from xpeval.evals.verdict.scorecard import write_scorecard

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "unit": {"type": "string", "enum": ["c", "f"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def weather_case(case_id: str = "weather_1") -> Case:
    return Case.model_validate(
        {
            "id": case_id,
            "category": "simple",
            "tools": [{"name": "get_weather", "parameters": WEATHER}],
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "expected": {"calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}]},
        }
    )


def answering(arguments: dict[str, Any] | None, *, parse_error: str | None = None) -> Any:
    def vendor(case: Case) -> TurnResult:
        if arguments is None and parse_error is None:
            return TurnResult(text="It is sunny.")
        call = ToolCall(id="c1", name="get_weather", arguments=arguments or {}, parse_error=parse_error)
        return TurnResult(tool_calls=[call], finish_reason="tool_calls")

    return vendor


def test_arguments_that_parse_but_break_the_schema_are_counted_invalid_and_named(tmp_path: Path) -> None:
    path = run_vendors(
        tmp_path / "results.jsonl",
        [weather_case()],
        {
            "openai-compatible": perfect,
            "moonshot": answering({"city": "Paris", "unit": "kelvin"}),
            "anthropic-messages": answering(None),
        },
    )
    rows = {r.adapter: r for r in final_results(ResultsFile.read(path).rows)}
    broken = rows["moonshot"]
    assert broken.schema_valid is False
    assert broken.calls[0].schema_valid is False
    assert broken.calls[0].schema_error == "get_weather: /unit: 'kelvin' is not one of ['c', 'f']"
    assert rows["openai-compatible"].schema_valid is True
    assert rows["anthropic-messages"].schema_valid is None, "no call: nothing to validate"

    paths = write_scorecard(load_run(path).frame, tmp_path / "reports")
    card = pd.read_csv(paths["csv"]).set_index("adapter")
    assert card["schema_valid_n"].to_dict() == {
        "anthropic-messages": 0,
        "moonshot": 1,
        "openai-compatible": 1,
    }
    assert card.loc["moonshot", "schema_valid"] == 0.0
    assert card.loc["openai-compatible", "schema_valid"] == 1.0
    assert "schema valid" in paths["md"].read_text()


@pytest.mark.parametrize(
    ("arguments", "parse_error", "reason"),
    [
        ({"city": ""}, None, "get_weather: /city: '' should be non-empty"),
        ({"unit": "c"}, None, "get_weather: (arguments): 'city' is a required property"),
        (
            {"city": "Paris", "when": "now"},
            None,
            "Additional properties are not allowed ('when' was unexpected)",
        ),
        ({}, "Expecting value", "get_weather: arguments are not a JSON object (Expecting value)"),
    ],
)
def test_each_kind_of_invalid_call_names_its_first_violation(
    arguments: dict[str, Any], parse_error: str | None, reason: str
) -> None:
    verdict = validate_call({"get_weather": WEATHER}, "get_weather", arguments, parse_error=parse_error)
    assert verdict.valid is False
    assert verdict.reason is not None and reason in verdict.reason


def test_a_call_to_a_tool_that_was_not_offered_is_invalid() -> None:
    verdict = validate_call({"get_weather": WEATHER}, "get_wether", {"city": "Paris"})
    assert (verdict.valid, verdict.reason) == (False, "get_wether: no tool of that name was offered")


def test_the_draft_the_schema_names_is_the_one_applied() -> None:
    # Draft 4's exclusiveMaximum is a boolean modifier of maximum; in 2020-12 it is a number.
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
    }
    assert validate_call({"t": draft4}, "t", {"n": 5}).valid is False
    assert validate_call({"t": draft4}, "t", {"n": 4}).valid is True
    latest = {"type": "object", "properties": {"n": {"type": "number", "exclusiveMaximum": 5}}}
    assert validate_call({"t": latest}, "t", {"n": 5}).valid is False
    # 2020-12's prefixItems means nothing to draft 7, so draft 7 accepts what 2020-12 refuses.
    items = {"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "integer"}]}}}
    draft7 = {**items, "$schema": "http://json-schema.org/draft-07/schema#"}
    assert validate_call({"t": items}, "t", {"p": ["x"]}).valid is False
    assert validate_call({"t": draft7}, "t", {"p": ["x"]}).valid is True


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (
            {"$schema": "https://example.com/my-draft", "type": "object"},
            "names a draft jsonschema does not know",
        ),
        ({"type": "object", "properties": {"a": {"type": "strnig"}}}, "is not a valid Draft202012 schema"),
    ],
)
def test_a_schema_that_cannot_be_applied_leaves_the_call_not_judged(schema: dict[str, Any], why: str) -> None:
    verdict = validate_call({"t": schema}, "t", {"a": 1})
    assert verdict.valid is None
    assert verdict.reason is not None and why in verdict.reason and "not judged" in verdict.reason


def test_a_hostile_schema_or_deep_arguments_are_not_judged_quickly_never_a_crash() -> None:
    deep_schema: dict[str, Any] = {"type": "object"}
    for _ in range(20_000):
        deep_schema = {"type": "object", "properties": {"a": deep_schema}}
    assert validate_call({"t": deep_schema}, "t", {"a": {}}).valid is None
    deep_arguments: dict[str, Any] = {}
    for _ in range(20_000):
        deep_arguments = {"a": deep_arguments}
    recursive = {
        "$defs": {"n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }
    verdict = validate_call({"t": recursive}, "t", deep_arguments)
    assert verdict.valid is None and "nest deeper" in str(verdict.reason)


def test_a_call_whose_arguments_were_cut_to_the_row_bound_is_not_judged_and_says_so(tmp_path: Path) -> None:
    path = run_vendors(
        tmp_path / "results.jsonl",
        [weather_case()],
        {"moonshot": answering({"city": "P" * 10_000, "unit": "kelvin"})},
    )
    (row,) = final_results(ResultsFile.read(path).rows)
    assert row.truncated, "the 10 KB city was cut"
    assert row.calls[0].schema_valid is None
    assert "cut to the row bound" in str(row.calls[0].schema_error)
    assert row.schema_valid is None, "an unjudged call never counts as valid"
