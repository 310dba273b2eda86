"""The acceptance checker's own behaviour: modes, the definition's shape, hostile input."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from xpeval.adapters.contract import ToolSpec, TurnRequest, UserMessage
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.schema import prepare_tools
from xpeval.adapters.wires import get_wire
from xpeval.evals.acceptance.checker import (
    ProviderMode,
    build_definition,
    check,
    check_request,
    definitions_in_request,
    layout_for,
    mode_for,
)
from xpeval.evals.acceptance.checker.layout import modes
from xpeval.evals.acceptance.checker.rules import PROFILES

OWN_MODES = tuple(PROFILES)
"""The rule sets the checker ships (each judges requests of one of xpeval's own wires)."""

CONFORMING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["c", "f"]},
    },
    "required": ["city", "unit"],
}
STRICT_EXTRA = {"additionalProperties": False}


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {
            "type": "object",
            "properties": {"a": schema},
            "required": ["a"],
            "additionalProperties": False,
        }
    return schema


@pytest.mark.parametrize("mode", OWN_MODES)
def test_a_plain_conforming_tool_has_no_violations_in_any_mode(mode: ProviderMode) -> None:
    schema = {**CONFORMING, **STRICT_EXTRA} if "strict" in mode else CONFORMING
    assert check(mode, build_definition(mode, "get_weather", "Weather", schema)) == []


def test_every_registered_adapter_is_judged_by_some_mode(xpeval_adapter_id: str) -> None:
    contract = effective_contract(xpeval_adapter_id)
    strict = prepare_tools(contract.schema_dialect, []).strict
    assert mode_for(contract.wire, contract.schema_dialect, strict) in modes()


def test_gemini_modes_read_different_fields() -> None:
    loose = {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}},
        "additionalProperties": False,
    }
    as_json_schema = build_definition("gemini-json-schema", "t", "", loose)
    as_parameters = build_definition("gemini-parameters", "t", "", loose)
    assert "parametersJsonSchema" in as_json_schema and "parameters" in as_parameters
    assert check("gemini-json-schema", as_json_schema) == []
    rules = {v.rule for v in check("gemini-parameters", as_parameters)}
    assert {"gemini.parameters.type-not-repeated", "gemini.parameters.unknown-field"} <= rules


def test_a_schema_in_the_field_the_mode_does_not_read_is_a_violation() -> None:
    definition = {"name": "t", "description": "", "parameters": CONFORMING}
    found = check("gemini-json-schema", definition)
    assert {v.pointer for v in found if v.rule == "definition.shape"} == {
        "/parametersJsonSchema",
        "/parameters",
    }


def test_both_gemini_schema_fields_at_once_are_refused() -> None:
    definition = {"name": "t", "parameters": CONFORMING, "parametersJsonSchema": CONFORMING}
    assert any(v.pointer == "/parameters" for v in check("gemini-json-schema", definition))


def test_a_strict_mode_definition_without_the_strict_flag_is_a_violation() -> None:
    definition = build_definition("openai-chat", "t", "", {**CONFORMING, **STRICT_EXTRA})
    found = check("openai-chat-strict", definition)
    assert [v.pointer for v in found] == ["/function/strict"]


def test_every_violation_cites_its_source() -> None:
    hostile = {"type": "object", "properties": {"x": {"type": "array"}}, "default": {}, "$schema": 3}
    for mode in OWN_MODES:
        for found in check(mode, build_definition(mode, "1 bad.name", "", hostile)):
            assert found.source.startswith("["), found


@pytest.mark.parametrize("definition", [None, [], "tool", {"function": 3}, {"type": "function"}])
def test_a_definition_that_is_not_a_tool_is_refused_not_raised(definition: Any) -> None:
    for mode in OWN_MODES:
        assert check(mode, definition)


def test_a_twenty_thousand_deep_schema_is_refused_quickly_without_recursion() -> None:
    deep = _deep(20_000)
    for mode in OWN_MODES:
        started = time.perf_counter()
        found = check(mode, build_definition(mode, "deep", "", deep))
        assert time.perf_counter() - started < 1
        assert "schema.nesting-depth" in {v.rule for v in found}


def test_request_limits_count_tools_and_point_into_the_request() -> None:
    one = build_definition("openai-chat", "bad.name", "", CONFORMING)
    found = check_request("openai-chat", [one] * 129)
    assert "/tools" in {v.pointer for v in found if v.rule == "openai.tool-count"}
    assert "/tools/128/function/name" in {v.pointer for v in found}
    assert not [v for v in check_request("openai-chat", [one] * 128) if v.rule == "openai.tool-count"]


def test_recursive_schemas_are_refused_by_anthropic_strict_only() -> None:
    node = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["children"],
        "additionalProperties": False,
    }
    assert "anthropic.strict.recursive-schema" in {
        v.rule for v in check("anthropic-strict", build_definition("anthropic-strict", "t", "", node))
    }
    assert check("openai-chat-strict", build_definition("openai-chat-strict", "t", "", node)) == []


def test_mutually_recursive_definitions_are_recursive() -> None:
    defs: dict[str, Any] = {
        "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}, "required": ["b"],
              "additionalProperties": False},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"],
              "additionalProperties": False},
    }  # fmt: skip
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "required": ["a"],
        "additionalProperties": False,
        "$defs": defs,
    }
    found = check("anthropic-strict", build_definition("anthropic-strict", "t", "", schema))
    assert [v.rule for v in found] == ["anthropic.strict.recursive-schema"]
    acyclic = {**schema, "$defs": {**defs, "B": {"type": "string"}}}
    assert check("anthropic-strict", build_definition("anthropic-strict", "t", "", acyclic)) == []


def test_moonshot_ref_standing_alone_into_root_defs_is_accepted() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P"}, "q": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }
    assert check("moonshot", build_definition("moonshot", "t", "", schema)) == []
    nested = {**schema, "properties": {"p": {"$ref": "#/properties/q"}, "q": {"type": "string"}}}
    assert {v.rule for v in check("moonshot", build_definition("moonshot", "t", "", nested))} == {
        "moonshot.ref-root-defs"
    }


def test_what_each_adapters_wire_sends_is_read_in_its_modes_shape(xpeval_adapter_id: str) -> None:
    contract = effective_contract(xpeval_adapter_id)
    tools = [ToolSpec(name="get_weather", description="Weather", parameters={**CONFORMING, **STRICT_EXTRA})]
    prepared = prepare_tools(contract.schema_dialect, tools)
    request = TurnRequest(model="m", messages=[UserMessage(content="hi")], tools=tools)
    sent = definitions_in_request(contract.wire, get_wire(contract.wire).encode(request, prepared))
    mode = mode_for(contract.wire, contract.schema_dialect, prepared.strict)
    assert len(sent) == 1
    assert [v.rule for v in check(mode, sent[0]) if v.rule == "definition.shape"] == []


def test_a_gemini_function_without_arguments_may_omit_parameters() -> None:
    assert check("gemini-parameters", {"name": "now", "description": "time"}) == []
    assert check("gemini-json-schema", {"name": "now", "description": "time"})


def test_the_checker_shares_no_code_with_the_dialect_passes() -> None:
    """A judge written from the passes' own walker would agree with their mistakes."""
    import xpeval.evals.acceptance.checker

    package = Path(xpeval.evals.acceptance.checker.__file__).parent
    for source in package.rglob("*.py"):
        assert "xpeval.adapters.schema" not in source.read_text(), source


def test_every_mode_reads_its_layout_from_its_wire() -> None:
    """The one mode table is the wires' own (`WirePlugin.acceptance`): every rule set the checker
    ships is the mode of some registered wire that leaves its rules to the checker, and no such
    mode lacks one; each mode's layout is what its wire sends for its dialect, and `mode_for`
    finds the mode back from that wire and dialect."""
    own = [mode for mode, (_, spec) in modes().items() if spec.profile is None]
    assert sorted(own) == sorted(OWN_MODES)
    for mode, (wire, spec) in modes().items():
        assert layout_for(mode) == get_wire(wire).tool_layout(spec.dialect, spec.strict)
        assert mode_for(wire, spec.dialect, spec.strict) == mode


def test_mode_for_follows_the_strict_flag_the_wire_sends() -> None:
    assert mode_for("openai-chat", "openai", None) == "openai-chat"
    assert mode_for("openai-chat", "moonshot", None) == "moonshot"
    assert mode_for("openai-chat", "anthropic-strict", True) == "openai-chat-strict"
    assert mode_for("anthropic-messages", "anthropic", None) == "anthropic"
    assert mode_for("google-genai", "openai", None) == "gemini-json-schema"
    # Responses always sends the flag: `strict: false` is what goes out for a non-strict dialect.
    assert mode_for("openai-responses", "openai", None) == "openai-responses"


def _moonshot_rules(schema: dict[str, Any]) -> set[str]:
    return {v.rule for v in check("moonshot", build_definition("moonshot", "t", "", schema))}


def test_moonshot_reads_walle_strict_untyped_nodes_pass_an_enum_needs_a_type() -> None:
    # walle's "type is not defined" is said of an enum whose node has no type, of nothing else
    assert _moonshot_rules({"type": "object", "properties": {"x": {"description": "any value"}}}) == set()
    assert _moonshot_rules({"type": "object", "properties": {"x": {"enum": ["a"]}}}) == {
        "moonshot.type-not-defined"
    }


def test_moonshot_refuses_what_walle_strict_refuses_that_looked_accepted() -> None:
    undeclared = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}
    assert _moonshot_rules(undeclared) == {"moonshot.required-defined"}
    wrong_enum = {"type": "object", "properties": {"m": {"type": "array", "enum": ["MT10"]}}}
    assert _moonshot_rules(wrong_enum) == {"moonshot.enum"}
    # walle checks the listed types in order: a null value meets "integer" first and is refused
    field: dict[str, Any] = {"type": ["integer", "null"], "enum": [1, None]}
    nullable = {"type": "object", "properties": {"n": field}}
    assert _moonshot_rules(nullable) == {"moonshot.enum"}
    field["type"] = ["null", "integer"]
    assert _moonshot_rules(nullable) == set()


def test_moonshot_ref_siblings_conflict_only_when_the_target_repeats_them() -> None:
    defs = {"$defs": {"S": {"type": "string", "maxLength": 5, "description": "d"}}}
    described = {"type": "object", "properties": {"s": {"$ref": "#/$defs/S", "description": "x"}}, **defs}
    assert _moonshot_rules(described) == set()
    bounded = {"type": "object", "properties": {"s": {"$ref": "#/$defs/S", "maxLength": 3}}, **defs}
    assert _moonshot_rules(bounded) == {"moonshot.ref-with-siblings"}


def test_moonshot_refuses_a_reference_that_never_ends() -> None:
    node: dict[str, Any] = {
        "type": "object",
        "properties": {"next": {"$ref": "#/$defs/N"}},
        "required": ["next"],
    }
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N"}},
        "required": ["n"],
        "$defs": {"N": node},
    }
    assert _moonshot_rules(schema) == {"moonshot.ref-termination"}
    node["properties"]["next"] = {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}
    assert _moonshot_rules(schema) == set()
