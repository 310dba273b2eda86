"""The gate's verdict without reasons (a compiled `SchemaPlan`) is jsonschema's verdict, call by call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from xpeval.evals.results.evidence import project_case_set
from xpeval.evals.verdict.argument_validity import SchemaPlan, ToolValidators, _validator, validate_call

PROBES: list[Any] = [
    "x", "", "A" * 300, "JFK", "2026-01-01", 0, 1, -1, 1.5, 2.0, 10**9, -(10**9), True, False, None,
    [], ["a"], [1], [1, 1], [{"a": 1}], {}, {"a": 1},
]  # fmt: skip
"""Values each argument is replaced by: every JSON type, bounds, lengths, duplicates."""

NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "uniqueItems": True},
        "where": {
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
            "additionalProperties": False,
        },
        "value": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "number", "maximum": 5}]},
        "anything": True,
        "ref": {"$ref": "#/$defs/Small", "maximum": 3},
        "both": {"allOf": [{"type": "integer"}, {"$ref": "#/$defs/Small"}]},
    },
    "$defs": {"Small": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["tags"],
    "additionalProperties": False,
}


def _arguments(schema: dict[str, Any], base: dict[str, Any]) -> list[dict[str, Any]]:
    """`base`, with each argument the schema names replaced by each probe, left out, and an extra one."""
    names = list((schema.get("properties") or {}).keys()) or list(base)
    out = [base, {}, {**base, "unexpected": 1}]
    for name in names:
        out.append({k: v for k, v in base.items() if k != name})
        out.extend({**base, name: probe} for probe in PROBES)
        out.append({**base, name: {"n": 1}})
        out.append({**base, name: {"n": -1, "m": 2}})
    return out


def _agree(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    tools = {"t": schema}
    expected = validate_call(tools, "t", arguments).valid
    assert ToolValidators(tools).validity("t", arguments, reasons=False).valid is expected, arguments


def test_a_plan_gives_jsonschemas_verdict_on_every_builtin_tool_and_probe() -> None:
    cases = project_case_set(Path(__file__).resolve().parents[2]).cases
    planned = 0
    for case in cases.values():
        expected = case.turns[0].expected
        wanted = expected.calls[0].arguments if expected is not None and expected.calls else {}
        base = {name: values[0] for name, values in wanted.items() if values and values[0] != ""}
        for tool in case.all_tools:
            validator = _validator(
                json.dumps(tool.parameters, sort_keys=True, separators=(",", ":"), default=str)
            )
            planned += not isinstance(validator, str) and SchemaPlan.of(validator) is not None
            for arguments in _arguments(tool.parameters, base):
                _agree(tool.parameters, arguments)
    assert planned > 100  # most tool schemas have a plan, so the comparison covers it


@pytest.mark.parametrize("tags", [["a"], ["a", "a"], ["c"], "a", [], [1]])
@pytest.mark.parametrize(
    "where", [None, {"n": 0}, {"n": -1}, {"n": 1.0}, {"n": True}, {"m": 1}, {"n": 1, "m": 1}]
)
@pytest.mark.parametrize("value", [None, "abc", "abcd", 5, 6, True, [], {}])
def test_a_plan_gives_jsonschemas_verdict_through_items_nested_objects_and_any_of(
    tags: Any, where: Any, value: Any
) -> None:
    arguments: dict[str, Any] = {"tags": tags}
    if where is not None:
        arguments["where"] = where
    if value is not None:
        arguments["value"] = value
    _agree(NESTED, arguments)
    _agree(NESTED, {**arguments, "extra": 1})
    for small in (0, 1, 3, 4, 6, 2.0, 2.5, "2", True):
        _agree(NESTED, {**arguments, "ref": small})
        _agree(NESTED, {**arguments, "both": small})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"$ref": "#/$defs/A"}}},
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A%20B"}},
            "$defs": {"A B": {"type": "string"}},
        },
        {"$id": "urn:x", "type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {}}},
        {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}},
        {"type": "object", "properties": {"a": {"type": "array", "prefixItems": [{"type": "string"}]}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"a": {}}},
    ],
)
def test_a_schema_a_plan_cannot_follow_has_none_and_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    validator = _validator(json.dumps(schema, sort_keys=True, separators=(",", ":")))
    assert not isinstance(validator, str)
    assert SchemaPlan.of(validator) is None
    for arguments in ({"a": "x"}, {"a": 1}, {"a": ["x", 1]}):
        _agree(schema, arguments)
