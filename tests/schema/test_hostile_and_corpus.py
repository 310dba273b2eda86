"""Every dialect over hostile schemas and over the real corpus: an answer, never a crash.

Time per schema is measured in benchmarks/schema_passes.py; here the pytest timeout only keeps
a regression from hanging CI.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import corpus_files, corpus_path
from xpeval.adapters.schema import DIALECTS, Dialect, PassResult, apply_dialect, safe_json
from xpeval.adapters.schema.assertions import dropped_constraints

CORPUS_SCHEMAS = corpus_files("schemas/*/*.json")


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return node


def _ref_bomb(levels: int) -> dict[str, Any]:
    """Each definition references the previous one twice: 2**levels nodes if inlined."""
    defs: dict[str, Any] = {"D0": {"type": "string"}}
    for i in range(1, levels + 1):
        ref = f"#/$defs/D{i - 1}"
        defs[f"D{i}"] = {"type": "object", "properties": {"l": {"$ref": ref}, "r": {"$ref": ref}}}
    return {"type": "object", "properties": {"top": {"$ref": f"#/$defs/D{levels}"}}, "$defs": defs}


def _bounded(result: PassResult) -> None:
    """Closed by a budget with the loss reported, or refused with a reason."""
    if result.refusal is not None:
        assert "budget" in result.refusal or "nests" in result.refusal or "recursive" in result.refusal
        return
    assert result.schema_ is not None
    json.dumps(result.schema_)  # shallow enough for the standard encoder
    assert any(loss.action == "closed-by-budget" for loss in result.losses)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_20000_deep_schema_built_in_memory_is_closed_or_refused(dialect: Dialect) -> None:
    _bounded(apply_dialect(dialect, _deep(20_000)))


@pytest.mark.timeout(60)
def test_a_20000_deep_schema_read_from_a_file_is_closed_or_refused_by_every_dialect(tmp_path: Path) -> None:
    text = '{"type":"object","properties":{"a":' * 20_000 + '{"type":"string"}' + "}}" * 20_000
    path = tmp_path / "deep.json"
    path.write_text(text)
    schema = safe_json.load_path(path)
    for dialect in DIALECTS:
        _bounded(apply_dialect(dialect, schema))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_reference_bomb_comes_back_bounded(dialect: Dialect) -> None:
    result = apply_dialect(dialect, _ref_bomb(40))
    if result.schema_ is not None and not any(loss.action == "closed-by-budget" for loss in result.losses):
        # a dialect that keeps references never expands the bomb: the output stays small
        assert len(json.dumps(result.schema_)) < 20_000
    else:
        _bounded(result)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        "object",
        3,
        {"type": "object", "properties": []},
        {"type": "object", "required": None},
        {"type": "object", "properties": {"a": 5}},
        {"type": "object", "properties": {"a": {"anyOf": []}}},
        {"type": "object", "properties": {"a": {"$ref": 7}}},
        {"type": "object", "properties": {"a": {"type": []}}},
    ],
)
def test_malformed_parameters_are_refused_with_a_reason(dialect: Dialect, value: Any) -> None:
    result = apply_dialect(dialect, value)
    assert result.refusal and result.schema_ is None


def _one_of_sharing_a_required_key(member: dict[str, Any]) -> dict[str, Any]:
    """Two `oneOf` members that both require "a": the disjointness test reads their `required`
    and `properties` before the members themselves are checked to be well formed."""
    first = {"required": ["a"], **member}
    second = {"required": ["a"], **member}
    return {"type": "object", "properties": {"x": {"oneOf": [first, second]}}}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "member",
    [
        {"properties": [1]},
        {"properties": {"a": {"const": 1}}, "required": [{}]},
        {"properties": {"a": {"const": 1}}, "required": [1, "a"]},
        {"properties": {"a": {"const": 1}}, "required": [["a"]]},
    ],
    ids=["list-properties", "dict-in-required", "int-in-required", "list-in-required"],
)
def test_a_oneof_member_with_list_properties_is_refused_not_raised(
    dialect: Dialect, member: dict[str, Any]
) -> None:
    result = apply_dialect(dialect, _one_of_sharing_a_required_key(member))
    assert result.refusal and result.schema_ is None
    assert "/oneOf/" in result.refusal, "the refusal points at the malformed member"


@pytest.mark.corpus
@pytest.mark.timeout(120)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_corpus_schema_gets_an_answer_without_being_modified(dialect: Dialect) -> None:
    manifest = corpus_path("schemas", "MANIFEST.jsonl").read_text().splitlines()
    assert len(CORPUS_SCHEMAS) == sum(1 for line in manifest if line.strip()), "every listed schema is read"
    for path in CORPUS_SCHEMAS:
        schema = json.loads(path.read_text())["parameters"]
        before = copy.deepcopy(schema)
        result = apply_dialect(dialect, schema)
        assert schema == before, path
        assert (result.schema_ is None) == (result.refusal is not None), path
        if result.schema_ is not None:
            assert apply_dialect(dialect, result.schema_).schema_ == result.schema_, path


@pytest.mark.corpus
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_raw_bfcl_negative_controls_are_refused_naming_the_pseudo_type(dialect: Dialect) -> None:
    manifest = corpus_path("schemas", "MANIFEST.jsonl")
    controls = [
        json.loads(line)["path"]
        for line in manifest.read_text().splitlines()
        if json.loads(line)["kind"] == "negative-control"
    ]
    assert controls
    for relative in controls:
        schema = json.loads(corpus_path("schemas", relative).read_text())["parameters"]
        result = apply_dialect(dialect, schema)
        assert result.refusal is not None, relative
        assert "is not a JSON Schema type" in result.refusal
        assert any(
            f"'{name}'" in result.refusal for name in ("dict", "float", "tuple", "any", "HashMap", "String")
        )


@pytest.mark.corpus
@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_corpus_constraint_disappears_without_a_reported_loss(dialect: Dialect) -> None:
    silent = {}
    for path in CORPUS_SCHEMAS:
        schema = json.loads(path.read_text())["parameters"]
        result = apply_dialect(dialect, schema)
        if result.schema_ is None:
            continue
        missing = dropped_constraints(schema, result.schema_) - {loss.keyword for loss in result.losses}
        if missing:
            silent[path.name] = sorted(missing)
    assert silent == {}
