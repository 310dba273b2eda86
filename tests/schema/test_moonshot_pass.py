"""The Moonshot `$ref` rule of adapters/schema/RULES.md, one rule per test, and Moonshot's other
schema rules (docs/provider-schema-rules.md §8)."""

from __future__ import annotations

from typing import Any

import pytest

from xpeval.adapters.schema import Budgets, apply_dialect


def _moonshot(schema: dict[str, Any], budgets: Budgets | None = None) -> tuple[dict[str, Any], list[Any]]:
    result = apply_dialect("moonshot", schema, budgets=budgets or Budgets())
    assert result.refusal is None, result.refusal
    assert result.schema_ is not None
    return result.schema_, result.losses


def _field(siblings: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"field": {"$ref": "#/$defs/T", **siblings}},
        "$defs": {"T": target},
    }


def _walk(node: Any) -> list[dict[str, Any]]:
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _depth(node: Any) -> int:
    deepest, stack = 0, [(node, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else []
        stack.extend((child, depth + 1) for child in children)
    return deepest


def test_a_ref_with_siblings_is_inlined_so_no_node_carries_both() -> None:
    out, losses = _moonshot(_field({"description": "field-level"}, {"type": "string"}))
    assert out["properties"]["field"] == {"description": "field-level", "type": "string"}
    assert not any("$ref" in node and len(node) > 1 for node in _walk(out))
    assert [loss.action for loss in losses] == ["inlined"]


def test_inlining_takes_the_union_of_required() -> None:
    target = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    siblings = {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
    field = _moonshot(_field(siblings, target))[0]["properties"]["field"]
    assert sorted(field["required"]) == ["a", "b"]


def test_inlining_merges_properties_of_node_and_target() -> None:
    target = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}
    siblings = {"properties": {"a": {"description": "from the node"}, "b": {"type": "integer"}}}
    field = _moonshot(_field(siblings, target))[0]["properties"]["field"]
    assert set(field["properties"]) == {"a", "b"}
    assert field["properties"]["a"] == {"description": "from the node", "type": "string", "maxLength": 3}


def test_the_nodes_own_value_wins_and_a_looser_one_is_reported_relaxed() -> None:
    out, losses = _moonshot(_field({"maxLength": 10}, {"type": "string", "maxLength": 5}))
    assert out["properties"]["field"]["maxLength"] == 10
    relaxed = [loss for loss in losses if loss.action == "relaxed"]
    assert [(loss.pointer, loss.keyword) for loss in relaxed] == [("/$defs/T/maxLength", "maxLength")]


def test_a_tighter_node_value_wins_without_a_loss() -> None:
    out, losses = _moonshot(_field({"maxLength": 3, "description": "d"}, {"type": "string", "maxLength": 5}))
    assert out["properties"]["field"]["maxLength"] == 3
    assert all(loss.exact for loss in losses)


def test_siblings_neither_dropped_nor_overwriting_the_target() -> None:
    target = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    field = _moonshot(_field({"description": "kept", "required": ["b"]}, target))[0]["properties"]["field"]
    assert field["description"] == "kept"
    assert "a" in field["required"] and "b" in field["required"]


def test_an_unresolvable_ref_stays_bare_and_the_tool_is_refused() -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing", "description": "d"}}}
    result = apply_dialect("moonshot", schema)
    assert result.refusal is not None
    assert "#/$defs/Missing" in result.refusal and "bare $ref" in result.refusal


def test_a_bare_ref_stays_a_reference_into_root_defs() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"$ref": "#/definitions/Old"}, "y": {"$ref": "#/properties/x"}},
        "definitions": {"Old": {"type": "string"}},
    }
    out, _ = _moonshot(schema)
    refs = [node["$ref"] for node in _walk(out) if "$ref" in node]
    assert refs and all(ref.startswith("#/$defs/") for ref in refs)
    assert "definitions" not in out
    for ref in refs:
        assert ref.removeprefix("#/$defs/") in out["$defs"]


def test_every_node_has_a_type_and_none_sits_beside_a_ref() -> None:
    schema = {
        "type": "object",
        "properties": {
            "anything": {"description": "no type at all"},
            "choice": {"enum": ["a", "b"]},
            "number": {"const": 3},
            "pet": {"$ref": "#/$defs/Pet", "type": "object"},
        },
        "$defs": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    out, _ = _moonshot(schema)
    for node in _walk(out["properties"]):
        if "$ref" in node:
            assert set(node) == {"$ref"}
        elif "anyOf" in node:
            assert "type" not in node
            assert all("type" in member or "$ref" in member for member in node["anyOf"])
    assert out["properties"]["choice"]["type"] == "string"
    assert out["properties"]["number"]["type"] == "integer"


def test_with_anyof_the_type_moves_into_the_members() -> None:
    schema = {
        "type": "object",
        "properties": {"v": {"type": "string", "anyOf": [{"maxLength": 2}, {"format": "email"}]}},
    }
    v = _moonshot(schema)[0]["properties"]["v"]
    assert "type" not in v
    assert [member["type"] for member in v["anyOf"]] == ["string", "string"]


def test_a_property_named_ref_is_refused() -> None:
    result = apply_dialect("moonshot", {"type": "object", "properties": {"$ref": {"type": "string"}}})
    assert result.refusal is not None and "$ref" in result.refusal


def test_a_recursive_ref_with_siblings_stays_finite() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node", "description": "root"}},
        "$defs": {
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node", "description": "c"}}}
        },
    }
    out, losses = _moonshot(schema)
    assert out["properties"]["tree"]["description"] == "root"
    assert out["$defs"]["Node"]["properties"]["child"] == {"$ref": "#/$defs/Node"}
    assert any(loss.action == "dropped" and loss.keyword == "$ref" for loss in losses)


# --- the three budgets, each on its own: removing one guard turns exactly its test red ---------


def test_the_depth_budget_closes_a_deep_schema_without_references() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(20_000):
        node = {"type": "object", "properties": {"a": node}}
    out, losses = _moonshot(node, Budgets(max_depth=30, max_nodes=10**9, max_expansions=10**9))
    assert _depth(out) <= 2 * 30 + 8
    closed = [loss for loss in losses if loss.action == "closed-by-budget"]
    assert len(closed) == 1 and "depth" in closed[0].detail


def test_the_node_budget_closes_a_wide_schema_without_references() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(500)}}
    _, losses = _moonshot(schema, Budgets(max_depth=10**6, max_nodes=100, max_expansions=10**9))
    closed = [loss for loss in losses if loss.action == "closed-by-budget"]
    assert closed and all("node" in loss.detail for loss in closed)
    assert len(closed) == 500 - 99


def test_the_expansion_budget_closes_inlining_as_a_bare_ref() -> None:
    schema = {
        "type": "object",
        "properties": {f"p{i}": {"$ref": "#/$defs/S", "description": f"p{i}"} for i in range(50)},
        "$defs": {"S": {"type": "string"}},
    }
    out, losses = _moonshot(schema, Budgets(max_depth=10**6, max_nodes=10**9, max_expansions=10))
    inlined = [p for p in out["properties"].values() if "$ref" not in p]
    bare = [p for p in out["properties"].values() if p == {"$ref": "#/$defs/S"}]
    assert (len(inlined), len(bare)) == (10, 40)
    closed = [loss for loss in losses if loss.action == "closed-by-budget"]
    assert len(closed) == 40 and all("expansion" in loss.detail for loss in closed)


# --- what Moonshot's validator (walle, at lite) takes, and what it does not honour --------------


def test_a_required_name_without_a_property_gets_one() -> None:
    out, losses = _moonshot(
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}
    )
    assert set(out["properties"]) == {"a", "b"}
    assert out["required"] == ["a", "b"]
    assert out["properties"]["b"] == {"$ref": "#/$defs/AnyValue"}
    assert losses == []
    typed = {"type": "object", "required": ["x"], "additionalProperties": {"type": "integer"}}
    assert _moonshot(typed)[0]["properties"]["x"] == {"type": "integer"}
    closed = {"type": "object", "properties": {}, "required": ["x"], "additionalProperties": False}
    out, losses = _moonshot(closed)
    assert out.get("required") == [] and [(loss.keyword, loss.action) for loss in losses] == [
        ("required", "dropped")
    ]


def test_an_enum_keeps_the_values_of_its_type_and_lists_null_first() -> None:
    schema = {"type": "object", "properties": {"n": {"type": ["integer", "null"], "enum": [1, None, "x"]}}}
    assert _moonshot(schema)[0]["properties"]["n"] == {"type": ["null", "integer"], "enum": [1, None]}
    none_fits = {"type": "object", "properties": {"m": {"type": "array", "enum": ["MT10"]}}}
    assert "admits nothing" in (apply_dialect("moonshot", none_fits).refusal or "")
    several = {"type": "object", "properties": {"v": {"type": ["string", "integer"], "enum": ["a", 1]}}}
    members = _moonshot(several)[0]["properties"]["v"]["anyOf"]
    assert members == [{"type": "string", "enum": ["a"]}, {"type": "integer", "enum": [1]}]


def test_keywords_moonshot_does_not_honour_are_losses() -> None:
    field = {"type": "string", "format": "uuid", "pattern": "^a", "not": {"const": "b"}}
    out, losses = _moonshot({"type": "object", "properties": {"f": field}})
    assert out["properties"]["f"] == {"type": "string", "format": "uuid", "pattern": "^a"}
    found = {(loss.keyword, loss.action) for loss in losses}
    assert found == {("format", "relaxed"), ("pattern", "relaxed"), ("not", "dropped")}
    assert all("not honoured by the provider" in loss.detail for loss in losses)
    out, losses = _moonshot({"type": "object", "properties": {"c": {"const": "on"}}})
    assert out["properties"]["c"] == {"type": "string", "enum": ["on"]}
    assert [loss.action for loss in losses] == ["renamed"]


def test_an_any_of_parents_plain_keywords_move_into_the_members() -> None:
    node = {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"name": {"type": "string"}}}]}
    out, _ = _moonshot({"type": "object", "properties": {"n": {**node, "required": ["name"]}}})
    members = out["properties"]["n"]["anyOf"]
    assert "required" not in out["properties"]["n"]
    assert members[1]["required"] == ["name"]


def test_a_reference_that_never_ends_is_refused() -> None:
    node = {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}, "required": ["next"]}
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N"}},
        "required": ["n"],
        "$defs": {"N": node},
    }
    assert "never ends" in (apply_dialect("moonshot", schema).refusal or "")
    optional_root = {**schema, "required": []}
    assert apply_dialect("moonshot", optional_root).refusal is None


def test_an_enum_beside_an_any_of_moves_into_the_members_where_it_has_a_type() -> None:
    node = {"enum": ["a", "b"], "anyOf": [{"type": "string"}]}
    out, _ = _moonshot({"type": "object", "properties": {"a": node}})
    assert out["properties"]["a"] == {"anyOf": [{"type": "string", "enum": ["a", "b"]}]}


def test_a_node_of_several_types_with_keywords_is_split_by_type_for_walle_strict() -> None:
    """walle-strict refuses any keyword but type, description and title beside a type array
    (docs/provider-schema-rules.md §8): one member per type, each with its own keywords (exact)."""
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": ["string", "object"], "minLength": 1, "properties": {"a": {"type": "integer"}}}
        },
    }
    result = apply_dialect("moonshot", schema)
    assert result.refusal is None and result.schema_ is not None
    unit = result.schema_["properties"]["unit"]
    assert "type" not in unit and [m["type"] for m in unit["anyOf"]] == ["string", "object"]
    assert unit["anyOf"][0]["minLength"] == 1 and "properties" not in unit["anyOf"][0]
    assert unit["anyOf"][1]["properties"] == {"a": {"type": "integer"}}
    assert not [loss for loss in result.losses if loss.keyword in ("minLength", "properties")]


@pytest.mark.parametrize("name", ["required", "additionalProperties", "anyOf", "$defs"])
def test_a_property_named_like_a_keyword_walle_strict_reserves_refuses_the_tool(name: str) -> None:
    result = apply_dialect("moonshot", {"type": "object", "properties": {name: {"type": "string"}}})
    assert result.refusal is not None and result.refusal_rule == "moonshot.reserved-property-name"


@pytest.mark.parametrize("keyword", [{"discriminator": {"propertyName": "kind"}}, {"optional": True}])
def test_discriminator_and_optional_are_sent_with_a_loss(keyword: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"kind": {"type": "string", **keyword}}}
    result = apply_dialect("moonshot", schema)
    assert [(loss.keyword, loss.action) for loss in result.losses] == [(next(iter(keyword)), "relaxed")]
