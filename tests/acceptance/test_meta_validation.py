"""The checker's memoized meta-validation (`checker/meta.py`) reports exactly what plain
`jsonschema` reports: the same (path, message) pairs in the same order, on the corpus, on broken
variants of it, and where its memos could mix documents up."""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from tests._walle import corpus_schemas
from xpeval.evals.acceptance.checker import meta
from xpeval.evals.acceptance.sources.tool_files import BUILTIN_CORPUS

_PLAIN = Draft202012Validator(Draft202012Validator.META_SCHEMA)
_BREAKERS: list[Any] = [5, "x", [1, 2], {"a": 1}, -1, 1.5, True, None, [], {}, ["a", "a"]]
_KEYWORDS = ["type", "minLength", "required", "properties", "items", "enum", "anyOf", "minimum", "$ref",
             "additionalProperties", "pattern", "$defs", "dependencies"]  # fmt: skip


def _plain(schema: Any) -> meta.MetaErrors:
    return tuple(
        ([str(t) for t in error.absolute_path], error.message) for error in _PLAIN.iter_errors(schema)
    )


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            yield current
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def _schemas() -> list[Any]:
    found = []
    for path in sorted(BUILTIN_CORPUS.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("parameters"), dict):
            found.append(data["parameters"])
    found += [parameters for _, parameters in corpus_schemas()]
    return found


def _broken(schemas: list[Any]) -> list[Any]:
    """Each schema with one keyword of one node set to a wrong value."""
    rnd = random.Random(21)
    out = []
    for schema in schemas:
        variant = copy.deepcopy(schema)
        node = rnd.choice(list(_nodes(variant)))
        node[rnd.choice(_KEYWORDS)] = copy.deepcopy(rnd.choice(_BREAKERS))
        out.append(variant)
    return out


@functools.cache
def _cases() -> tuple[list[Any], list[meta.MetaErrors]]:
    schemas = _schemas()
    documents = schemas + _broken(schemas)
    return documents, [_plain(schema) for schema in documents]


@pytest.mark.parametrize("memo_size", [meta.MEMO_SIZE, 2])
def test_the_memos_give_plain_jsonschemas_errors_on_the_corpus_and_broken_variants(
    memo_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(meta, "MEMO_SIZE", memo_size)  # 2: evicting all the time
    monkeypatch.setattr(meta, "_documents", {})
    monkeypatch.setattr(meta, "_parts", {})
    documents, expected = _cases()
    assert sum(1 for errors in expected if errors) > len(documents) // 4  # the variants do break it
    for _ in range(2):  # then again, every answer from the memos
        assert [meta.meta_errors(Draft202012Validator, schema) for schema in documents] == expected


def test_a_broken_subschema_repeated_in_several_places_is_reported_at_each() -> None:
    bad = {"type": "string", "minLength": -1, "enum": "no"}
    schema = {
        "type": "object",
        "properties": {"a": bad, "b": {"type": "array", "items": bad}},
        "$defs": {"c": bad},
        "anyOf": [bad, {"not": bad}],
    }
    errors = meta.meta_errors(Draft202012Validator, schema)
    assert errors == _plain(schema)
    places = {"/".join(path[:-1]) for path, _ in errors}
    assert places == {"properties/a", "properties/b/items", "$defs/c", "anyOf/0", "anyOf/1/not"}
    # the same subschema met again, in another document and deeper: its own paths, not the first's
    other = {"type": "object", "properties": {"x": {"type": "object", "properties": {"y": bad}}}}
    assert meta.meta_errors(Draft202012Validator, other) == _plain(other)


def test_documents_equal_as_json_but_not_to_jsonschema_each_get_their_own_errors() -> None:
    # a memo keyed by JSON text took the list's answer for the tuple, which is no array
    listed = {"type": "object", "required": ["a"]}
    tupled = {"type": "object", "required": ("a",)}
    integral = {"type": "object", "minProperties": 1}
    floating = {"type": "object", "minProperties": 1.5}
    for schema in (listed, tupled, integral, floating):
        assert meta.meta_errors(Draft202012Validator, schema) == _plain(schema)
    assert meta.meta_errors(Draft202012Validator, listed) == ()
    assert meta.meta_errors(Draft202012Validator, tupled) != ()
    assert meta.meta_errors(Draft202012Validator, floating) != ()


def test_another_draft_is_validated_by_its_own_meta_schema() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "minProperties": -1}
    plain = Draft7Validator(Draft7Validator.META_SCHEMA)
    expected = tuple(([str(t) for t in e.absolute_path], e.message) for e in plain.iter_errors(schema))
    assert expected and meta.meta_errors(Draft7Validator, schema) == expected


def test_the_memoized_validator_keeps_its_class_through_the_meta_schemas_own_documents() -> None:
    # jsonschema's evolve picks the plain class from each meta-schema document's `$schema`: the
    # memos would then never be reached below the root
    shared = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}
    before = len(meta._parts)
    meta.meta_errors(Draft202012Validator, {**shared, "description": "first of its kind, surely"})
    assert len(meta._parts) > before
