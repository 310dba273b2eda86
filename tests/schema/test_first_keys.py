"""OpenAI strict mode's first-key rule is met by reordering (adapters/schema/_first_keys.py,
docs/provider-schema-rules.md §2): what is sent breaks no rule of the checker and is the original
schema with some objects' properties in another order, each reported `reordered` (form); a tool
is refused only when no order gives every member a first key of its own."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._corpus import corpus_path
from xpeval.adapters.contract import ToolSpec
from xpeval.adapters.schema import apply_dialect
from xpeval.evals.acceptance.checker import check
from xpeval.evals.acceptance.measure import CorpusSchema, measure_pair

_KEYS = ("a", "b", "c", "d")


def _member(keys: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {"type": "string"} for key in keys},
        "required": list(keys),
        "additionalProperties": False,
    }


def _tool(members: list[dict[str, Any]]) -> dict[str, Any]:
    """A schema already in strict form, so that reordering is the pass's only change."""
    return {
        "type": "object",
        "properties": {"u": {"anyOf": members}},
        "required": ["u"],
        "additionalProperties": False,
    }


def _sorted(value: Any) -> str:
    """The schema up to the order of keys, and of `required` (a set of names)."""
    stack = [value := json.loads(json.dumps(value))]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("required"), list):
                node["required"] = sorted(node["required"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return json.dumps(value, sort_keys=True)


def _first_keys(members: list[dict[str, Any]]) -> list[str]:
    return [next(iter(member["properties"])) for member in members]


def _sent(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "name": "t", "description": "d", "parameters": parameters, "strict": True}


def _order_exists(members: list[list[str]]) -> bool:
    return any(len(set(firsts)) == len(firsts) for firsts in itertools.product(*members))


members_strategy = st.lists(
    st.lists(st.sampled_from(_KEYS), min_size=1, max_size=4, unique=True), min_size=2, max_size=5
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(members=members_strategy)
def test_a_union_is_reordered_without_loss_or_refused_only_when_no_order_exists(
    members: list[list[str]],
) -> None:
    schema = _tool([_member(keys) for keys in members])
    result = apply_dialect("openai-strict", schema)
    if result.schema_ is None:
        assert result.refusal_rule == "openai.strict.any-of-first-keys"
        assert not _order_exists(members)
        return
    assert _order_exists(members)
    sent = result.schema_
    assert _sorted(sent) == _sorted(schema), "the same schema, up to the order of keys and of required"
    union = sent["properties"]["u"]["anyOf"]
    assert len(set(_first_keys(union))) == len(union)
    assert check("openai-responses-strict", _sent(sent)) == []
    assert all(
        (loss.action, loss.severity, loss.exact) == ("reordered", "form", True) for loss in result.losses
    )
    moved = {loss.pointer for loss in result.losses}
    expected = {
        f"/properties/u/anyOf/{i}/properties"
        for i, (before, after) in enumerate(zip(members, union, strict=True))
        if before[0] != next(iter(after["properties"]))
    }
    assert moved == expected
    assert apply_dialect("openai-strict", sent).schema_ == sent, "idempotent"


def test_a_union_without_a_shared_first_key_is_left_as_it_is() -> None:
    schema = _tool([_member(["a", "b"]), _member(["b", "a"])])
    result = apply_dialect("openai-strict", schema)
    assert result.schema_ == schema and result.losses == []


def test_a_definition_two_unions_reference_gets_one_order_for_both() -> None:
    schema = {
        "type": "object",
        "$defs": {"A": _member(["k", "m"])},
        "properties": {
            "u1": {"anyOf": [{"$ref": "#/$defs/A"}, _member(["k"])]},
            "u2": {"anyOf": [{"$ref": "#/$defs/A"}, _member(["m", "n"])]},
        },
        "required": ["u1", "u2"],
        "additionalProperties": False,
    }
    result = apply_dialect("openai-strict", schema)
    assert result.schema_ is not None, result.refusal
    assert list(result.schema_["$defs"]["A"]["properties"]) == ["m", "k"]
    assert list(result.schema_["properties"]["u2"]["anyOf"][1]["properties"]) == ["n", "m"]
    assert {loss.pointer for loss in result.losses} == {
        "/$defs/A/properties",
        "/properties/u2/anyOf/1/properties",
    }


def test_a_definition_whose_order_one_union_fixes_and_another_cannot_take_is_refused() -> None:
    schema = {
        "type": "object",
        "$defs": {"A": _member(["k", "m"])},
        "properties": {
            "u1": {"anyOf": [{"$ref": "#/$defs/A"}, _member(["k"])]},
            "u2": {"anyOf": [{"$ref": "#/$defs/A"}, _member(["m"])]},
        },
        "required": ["u1", "u2"],
        "additionalProperties": False,
    }
    assert apply_dialect("openai-strict", schema).refusal_rule == "openai.strict.any-of-first-keys"


PYDANTIC_DISCRIMINATED = {
    "$defs": {
        "Cat": {
            "properties": {
                "pet_type": {"const": "cat", "title": "Pet Type", "type": "string"},
                "meows": {"title": "Meows", "type": "integer"},
            },
            "required": ["pet_type", "meows"],
            "title": "Cat",
            "type": "object",
        },
        "Dog": {
            "properties": {
                "pet_type": {"const": "dog", "title": "Pet Type", "type": "string"},
                "barks": {"title": "Barks", "type": "number"},
            },
            "required": ["pet_type", "barks"],
            "title": "Dog",
            "type": "object",
        },
    },
    "properties": {
        "pet": {
            "discriminator": {
                "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"},
                "propertyName": "pet_type",
            },
            "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
            "title": "Pet",
        }
    },
    "required": ["pet"],
    "title": "Owner",
    "type": "object",
}
"""pydantic 2's `model_json_schema()` of `Owner(pet: Cat | Dog = Field(discriminator="pet_type"))`,
`Cat(pet_type: Literal["cat"], meows: int)`, `Dog(pet_type: Literal["dog"], barks: float)`."""


def test_pydantic_discriminated_union_is_sent_reordered() -> None:
    tool = ToolSpec(name="owner", description="d", parameters=PYDANTIC_DISCRIMINATED)
    pair = measure_pair("openai-responses", CorpusSchema("owner", tool), examples=20, seconds=2.0)
    assert pair.verdict == "rewritten" and pair.violations == [], pair.refusal
    assert [(loss["pointer"], loss["action"]) for loss in pair.losses if loss["keyword"] == "properties"] == [
        ("/$defs/Dog/properties", "reordered")
    ]
    assert pair.false_rejections == 0 and pair.loss_rate == 0.0


def test_github_create_pull_request_review_is_sent_with_nothing_lost_but_the_order() -> None:
    path = corpus_path("schemas", "mcp-github-archived", "create_pull_request_review.json")
    tool = ToolSpec.model_validate(json.loads(path.read_text()))
    pair = measure_pair("openai-responses", CorpusSchema("review", tool), examples=30, seconds=3.0)
    assert pair.verdict == "rewritten" and pair.violations == [], pair.refusal
    reordered = [loss for loss in pair.losses if loss["action"] == "reordered"]
    assert [(loss["pointer"], loss["severity"]) for loss in reordered] == [
        ("/properties/comments/items/anyOf/1/properties", "form")
    ]
    assert pair.false_rejections == 0
