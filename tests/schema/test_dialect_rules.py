"""What each dialect must change for its provider (docs/provider-schema-rules.md §1-§7), one
behaviour per test."""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import Dialect, apply_dialect
from xpeval.adapters.schema.openapi import as_json_schema


def _ok(dialect: Dialect, schema: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    result = apply_dialect(dialect, schema)
    assert result.refusal is None, result.refusal
    assert result.schema_ is not None
    return result.schema_, result.losses


def _objects(node: Any) -> list[dict[str, Any]]:
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "object" or (
                isinstance(item.get("type"), list) and "object" in item["type"]
            ):
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0, "default": 30},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    "required": ["name"],
}


# --- openai (non-strict) ----------------------------------------------------------------------


def test_openai_gives_every_object_properties_and_every_array_items() -> None:
    out, losses = _ok("openai", {"properties": {"o": {"type": "object"}, "l": {"type": ["array", "null"]}}})
    assert out["type"] == "object"
    assert out["properties"]["o"]["properties"] == {}
    assert out["properties"]["l"]["items"] == {}
    assert losses == []


def test_openai_refuses_a_root_that_is_not_an_object() -> None:
    assert "root schema must describe an object" in (
        apply_dialect("openai", {"type": "string"}).refusal or ""
    )


def test_openai_keeps_a_schema_it_accepts_unchanged() -> None:
    out, losses = _ok("openai", PERSON)
    assert out == PERSON and losses == []


# --- openai strict ------------------------------------------------------------------------------


def test_openai_strict_closes_every_object_and_requires_every_property() -> None:
    out, losses = _ok("openai-strict", PERSON)
    for node in _objects(out):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    narrowed = {loss.pointer for loss in losses if loss.action == "narrowed"}
    assert narrowed == {"/additionalProperties", "/properties/address/additionalProperties"}


def test_openai_strict_makes_optional_fields_nullable_and_drops_default_with_a_loss() -> None:
    out, losses = _ok("openai-strict", PERSON)
    assert out["properties"]["age"]["type"] == ["integer", "null"]
    assert out["properties"]["name"]["type"] == "string"
    assert "default" not in out["properties"]["age"]
    assert any(loss.keyword == "default" and loss.action == "dropped" for loss in losses)


def test_openai_strict_restores_a_null_for_an_optional_field_as_omitted_and_keeps_real_nulls() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}, "c": {"type": "string"}},
        "required": ["c"],
        "additionalProperties": False,
    }
    result = apply_dialect("openai-strict", schema)
    sent = {"a": None, "b": None, "c": "x"}
    assert result.restore_arguments(sent) == {"b": None, "c": "x"}
    assert sent == {"a": None, "b": None, "c": "x"}
    assert result.arguments_to_wire({"c": "x"}) == {"c": "x", "a": None, "b": None}


def test_openai_strict_refuses_a_free_form_object() -> None:
    for node in ({"type": "object"}, {"type": "object", "additionalProperties": {"type": "string"}}):
        result = apply_dialect("openai-strict", {"type": "object", "properties": {"m": node}})
        assert result.refusal is not None and "free-form" in result.refusal


def test_openai_strict_refuses_a_root_union_of_objects() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"b": {"type": "string"}}},
        ]
    }
    assert "union" in (apply_dialect("openai-strict", schema).refusal or "")


def test_openai_strict_refuses_more_than_ten_levels_of_nesting() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        node = {"type": "object", "properties": {"n": node}, "required": ["n"], "additionalProperties": False}
    assert "nests 11 levels" in (apply_dialect("openai-strict", node).refusal or "")


def test_openai_strict_drops_enums_past_1000_values_with_a_loss() -> None:
    schema = {
        "type": "object",
        "properties": {"big": {"type": "integer", "enum": list(range(1200))}, "small": {"enum": ["a", "b"]}},
        "required": ["big", "small"],
        "additionalProperties": False,
    }
    out, losses = _ok("openai-strict", schema)
    assert "enum" not in out["properties"]["big"] and out["properties"]["small"]["enum"] == ["a", "b"]
    assert [(loss.pointer, loss.action) for loss in losses] == [("/properties/big/enum", "dropped")]


def test_openai_strict_moves_lookaround_patterns_and_unsupported_bounds_to_the_description() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"type": "string", "pattern": "(?<=a)b", "maxLength": 4}},
        "required": ["p"],
        "additionalProperties": False,
    }
    out, losses = _ok("openai-strict", schema)
    p = out["properties"]["p"]
    assert "pattern" not in p and "maxLength" not in p
    assert "(?<=a)b" in p["description"] and "maxLength: 4" in p["description"]
    assert {loss.keyword for loss in losses if loss.action == "moved-to-description"} == {
        "pattern",
        "maxLength",
    }


def test_openai_strict_turns_oneof_into_anyof_exactly_when_members_cannot_overlap() -> None:
    disjoint = {
        "type": "object",
        "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["v"],
        "additionalProperties": False,
    }
    out, losses = _ok("openai-strict", disjoint)
    assert "anyOf" in out["properties"]["v"] and [loss.action for loss in losses] == ["renamed"]
    overlapping = {
        "type": "object",
        "properties": {"v": {"oneOf": [{"type": "number"}, {"type": "integer"}]}},
        "required": ["v"],
        "additionalProperties": False,
    }
    assert any(
        loss.keyword == "oneOf" and loss.action == "relaxed" for loss in _ok("openai-strict", overlapping)[1]
    )


# --- anthropic -----------------------------------------------------------------------------------


def test_anthropic_merges_a_root_allof_and_keeps_nested_refs_with_siblings() -> None:
    schema = {
        "allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"b": {"$ref": "#/$defs/S", "description": "d"}}}],
        "$defs": {
            "Base": {"type": "object", "properties": {"a": {"type": "string"}}},
            "S": {"type": "string"},
        },
    }
    out, losses = _ok("anthropic", schema)
    assert "allOf" not in out and set(out["properties"]) == {"a", "b"}
    assert out["properties"]["b"] == {"$ref": "#/$defs/S", "description": "d"}
    assert all(loss.exact for loss in losses)


def test_anthropic_strict_states_numeric_bounds_in_the_description() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}},
        "required": ["n"],
        "additionalProperties": False,
    }
    out, losses = _ok("anthropic-strict", schema)
    n = out["properties"]["n"]
    assert "minimum" not in n and "minimum: 1" in n["description"] and "maximum: 5" in n["description"]
    assert {loss.keyword for loss in losses} == {"minimum", "maximum"}


def test_anthropic_strict_refuses_a_recursive_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N"}},
        "additionalProperties": False,
        "$defs": {
            "N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "additionalProperties": False}
        },
    }
    assert "recursive" in (apply_dialect("anthropic-strict", schema).refusal or "")


# --- gemini ----------------------------------------------------------------------------------------


def test_gemini_openapi_inlines_references_and_writes_null_as_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/S"},
            "b": {"type": ["string", "null"]},
            "c": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "$defs": {"S": {"type": "string", "format": "date-time"}},
    }
    out, _ = _ok("gemini-openapi", schema)
    assert "$defs" not in out
    assert out["properties"]["a"] == {"type": "string", "format": "date-time"}
    assert out["properties"]["b"] == {"type": "string", "nullable": True}
    assert out["properties"]["c"] == {"anyOf": [{"type": "integer", "nullable": True}]}
    assert as_json_schema(out)["properties"]["b"]["type"] == ["string", "null"]


def test_gemini_openapi_reports_an_inputs_own_nullable_as_admitting_null() -> None:
    # read as JSON Schema, `nullable` is no keyword and the original refuses null; Gemini reads
    # the kept flag (the built-in corpus's nullable/openapi_nullable was a silent change)
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "nullable": True},
            "b": {"type": ["string", "null"], "nullable": True},
        },
    }
    out, losses = _ok("gemini-openapi", schema)
    assert out["properties"]["a"] == {"type": "string", "nullable": True}
    assert [(loss.pointer, loss.keyword, loss.action, loss.severity) for loss in losses] == [
        ("/properties/a/nullable", "nullable", "relaxed", "validation")
    ]


def test_gemini_openapi_keeps_string_enums_and_states_others_in_the_description() -> None:
    schema = {
        "type": "object",
        "properties": {"s": {"enum": ["x", "y"]}, "n": {"type": "integer", "enum": [1, 2]}},
    }
    out, losses = _ok("gemini-openapi", schema)
    assert out["properties"]["s"] == {"type": "string", "enum": ["x", "y"]}
    assert "enum" not in out["properties"]["n"] and "[1, 2]" in out["properties"]["n"]["description"]
    assert [(loss.keyword, loss.action) for loss in losses] == [("enum", "moved-to-description")]


def test_gemini_openapi_reports_dropping_additional_properties_false() -> None:
    out, losses = _ok(
        "gemini-openapi",
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    )
    assert "additionalProperties" not in out
    assert [(loss.keyword, loss.action) for loss in losses] == [("additionalProperties", "dropped")]


def test_gemini_openapi_writes_an_integer_exclusive_minimum_as_an_exact_minimum() -> None:
    out, losses = _ok(
        "gemini-openapi", {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}}
    )
    assert out["properties"]["n"] == {"type": "integer", "minimum": 1}
    assert all(loss.exact for loss in losses)


def test_gemini_openapi_refuses_recursion_and_free_form_objects() -> None:
    recursive = {"type": "object", "properties": {"n": {"$ref": "#"}}}
    assert "recursive" in (apply_dialect("gemini-openapi", recursive).refusal or "")
    free = {"type": "object", "properties": {"m": {"type": "object"}}}
    assert "free-form" in (apply_dialect("gemini-openapi", free).refusal or "")


def test_gemini_json_schema_moves_disallowed_ref_siblings_under_allof() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/S", "description": "d", "minLength": 2}},
        "$defs": {"S": {"type": "string"}},
    }
    out, losses = _ok("gemini-json-schema", schema)
    assert out["properties"]["a"] == {"description": "d", "minLength": 2, "allOf": [{"$ref": "#/$defs/S"}]}
    assert losses == []


def test_gemini_json_schema_refuses_a_reference_that_does_not_resolve() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}}
    assert "does not resolve" in (apply_dialect("gemini-json-schema", schema).refusal or "")


def test_a_format_on_a_number_is_kept_where_the_provider_reads_it() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "format": "int32"}}}
    assert _ok("gemini-openapi", schema)[0]["properties"]["n"] == {"type": "integer", "format": "int32"}
    assert _ok("moonshot", schema)[0]["properties"]["n"] == {"type": "integer", "format": "int32"}


def test_strict_keeps_an_explicit_null_the_original_already_allowed() -> None:
    """An optional field nullable through `anyOf` is made required but not nullable a second
    time, so the null a model sends for it is the original's null, not an omission."""
    from xpeval.adapters.contract import ToolCall, ToolSpec
    from xpeval.adapters.schema import prepare_tools

    schema = {
        "type": "object",
        "properties": {
            "changes": {
                "type": "object",
                "properties": {
                    "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "status": {"type": "string"},
                },
            }
        },
        "required": ["changes"],
    }
    prepared = prepare_tools("openai-strict", [ToolSpec(name="update", parameters=schema)])
    sent = prepared.tools[0].sent
    assert sent is not None
    assignee = sent.parameters["properties"]["changes"]["properties"]["assignee"]
    assert assignee["anyOf"].count({"type": "null"}) == 1
    call = ToolCall(id="c", name="update", arguments={"changes": {"assignee": None, "status": None}})
    assert prepared.restore(call).arguments == {"changes": {"assignee": None}}


def test_gemini_parameters_reports_narrowing_an_open_root_to_no_arguments() -> None:
    from xpeval.adapters.schema.apply import apply_dialect

    for open_root in ({"type": "object"}, {"type": "object", "additionalProperties": True}):
        result = apply_dialect("gemini-openapi", open_root)
        assert result.schema_ == {"type": "object", "properties": {}}
        assert [loss.action for loss in result.losses] == ["narrowed"]


def test_openai_gives_a_tuple_items_too_so_it_is_not_refused_for_missing_items() -> None:
    # tuple[int, str] as pydantic writes it; `items: {}` after `prefixItems` admits what was admitted
    tuple_ = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2}
    out, losses = _ok("openai", {"type": "object", "properties": {"t": tuple_}})
    assert out["properties"]["t"] == {**tuple_, "items": {}}
    assert losses == []
