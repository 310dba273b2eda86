"""Every refusal names its rule and the rule's source (`adapters/schema/refusals.py`).

Derived from the registry: each rule's source is a place in the repository that exists and says
what the rule quotes, and each rule has an example here that is refused by it; a rule added
without either fails. What `xpeval schemas` prints for a refusal (the JSON line, the table's
notes, the report) carries both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests._walle import corpus_schemas
from xpeval.adapters.contract import ToolSpec
from xpeval.adapters.schema import Budgets, apply_dialect, prepare_tools
from xpeval.adapters.schema._mfjs_fit import check_output
from xpeval.adapters.schema._walk import Refused
from xpeval.adapters.schema.apply import RULES
from xpeval.adapters.schema.refusals import REFUSAL_RULES, RefusalRule, source_file
from xpeval.evals.acceptance import measure
from xpeval.evals.acceptance.measure import CorpusSchema, measure_pair
from xpeval.evals.acceptance.table import pairs_frame, refusal_notes, to_markdown

REPO = Path(__file__).resolve().parents[2]


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"a": node}, "required": ["a"], "additionalProperties": False}
    return node


_RECURSIVE = {
    "type": "object",
    "$defs": {"N": _object(next={"$ref": "#/$defs/N"})},
    "properties": {"n": {"$ref": "#/$defs/N"}},
}
_NEVER_ENDS = {
    "type": "object",
    "$defs": {"N": {**_object(n={"$ref": "#/$defs/N"}), "required": ["n"]}},
    "properties": {"x": {"$ref": "#/$defs/N"}},
    "required": ["x"],
}
_TWO_KEYS = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}

PASS_EXAMPLES: dict[str, tuple[str, Any]] = {
    "schema.not-json-schema": ("openai", _object(a={"type": "strnig"})),
    "schema.root-not-object": ("openai", {"type": "string"}),
    "schema.root-union": (
        "anthropic",
        {"anyOf": [_object(a={"type": "string"}), _object(b={"type": "string"})]},
    ),
    "schema.unresolvable-ref": ("openai-strict", _object(a={"$ref": "#/$defs/missing"})),
    "schema.unknown-dialect": ("no-such-dialect", _object()),
    "strict.type-required": ("openai-strict", _object(a={})),
    "strict.array-items": ("openai-strict", _object(a={"type": "array"})),
    "strict.free-form-object": ("openai-strict", {"type": "object", "additionalProperties": True}),
    "strict.required-undeclared": (
        "openai-strict",
        {**_object(a={"type": "string"}), "required": ["a", "b"]},
    ),
    "openai.strict.size-limits": (
        "openai-strict",
        _object(**{f"p{i}": {"type": "string"} for i in range(5001)}),
    ),
    "openai.strict.any-of-first-keys": (
        "openai-strict",
        _object(u={"anyOf": [_TWO_KEYS, _TWO_KEYS, _TWO_KEYS]}),
    ),
    "anthropic.strict.recursion": ("anthropic-strict", _RECURSIVE),
    "gemini.parameters.type-required": ("gemini-openapi", _object(a={})),
    "gemini.parameters.array-items": ("gemini-openapi", _object(a={"type": "array"})),
    "gemini.parameters.free-form-object": ("gemini-openapi", _object(a={"type": "object"})),
    "gemini.parameters.recursion": ("gemini-openapi", _RECURSIVE),
    "gemini.parameters.property-name": ("gemini-openapi", _object(**{"a-b": {"type": "string"}})),
    "gemini.parameters.enum": ("gemini-openapi", _object(a={"type": "integer", "enum": [None]})),
    "gemini.parameters.only-null": ("gemini-openapi", _object(a={"type": "null"})),
    "moonshot.enum": ("moonshot", _object(a={"type": "string", "enum": [1, 2]})),
    "moonshot.ref-never-ends": ("moonshot", _NEVER_ENDS),
    "moonshot.ref-property-name": ("moonshot", _object(**{"$ref": {"type": "string"}})),
    "moonshot.reserved-property-name": ("moonshot", _object(anyOf={"type": "string"})),
}
"""A schema each pass-level rule refuses, and the dialect."""

OUTPUT_EXAMPLES: dict[str, Any] = {
    # the moonshot pass moves a repeated parent keyword into the branches before this check, so
    # only an output built by hand reaches it
    "moonshot.any-of-parent-keyword": {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "string", "minLength": 1}], "minLength": 2}},
    },
}
"""An output Moonshot's whole-output check refuses."""


def _refused_by_pass(rule_id: str) -> str | None:
    dialect, schema = PASS_EXAMPLES[rule_id]
    return apply_dialect(dialect, schema).refusal_rule


def _refused_by_request(rule_id: str) -> str | None:
    tool = ToolSpec(name="t", description="d", parameters=_object(a={"type": "string"}))
    if rule_id == "request.duplicate-name":
        return prepare_tools("openai", [tool, tool]).tools[1].refusal_rule
    if rule_id == "request.tool-cap":
        tools = [tool.model_copy(update={"name": f"t{i}"}) for i in range(129)]
        return prepare_tools("openai", tools).tools[128].refusal_rule
    optional = ToolSpec(
        name="t", description="d", parameters=_object(**{f"o{i}": {"type": "string"} for i in range(25)})
    )
    return prepare_tools("anthropic-strict", [optional]).tools[0].refusal_rule


def _refused_by_measure(rule_id: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    tool = ToolSpec(name="t", description="d", parameters=_object(a={"type": "string"}))
    if rule_id == "xpeval.no-tool":
        entry = CorpusSchema("k", None, problem="the file could not be read")
    else:
        entry = CorpusSchema("k", tool)

        def fail(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("boom")

        class _Wire:
            encode = staticmethod(fail)

        if rule_id == "xpeval.pass-error":
            monkeypatch.setattr(measure, "prepare_tools", fail)
        else:
            monkeypatch.setattr(measure, "get_wire", lambda name: _Wire())
    pair = measure_pair("openai-chat", entry, examples=0, seconds=0.0, fidelity=False)
    assert pair.verdict == "refused"
    assert pair.refusal_source == REFUSAL_RULES[rule_id].source
    return pair.refusal_rule


def _refused_by_output_check(rule_id: str) -> str | None:
    try:
        check_output(OUTPUT_EXAMPLES[rule_id])
    except Refused as refusal:
        return refusal.rule.id
    return None


def _budget_refusal() -> str | None:
    return apply_dialect("openai-strict", _nested(5), budgets=Budgets(max_depth=2)).refusal_rule


@pytest.mark.parametrize("rule_id", sorted(REFUSAL_RULES))
def test_every_refusal_rule_has_an_example_it_refuses(rule_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if rule_id in PASS_EXAMPLES:
        found = _refused_by_pass(rule_id)
    elif rule_id in OUTPUT_EXAMPLES:
        found = _refused_by_output_check(rule_id)
    elif rule_id.startswith("request.") or rule_id == "anthropic.strict.optional-budget":
        found = _refused_by_request(rule_id)
    elif rule_id.startswith("xpeval."):
        found = _refused_by_measure(rule_id, monkeypatch)
    elif rule_id == "schema.budget-spent":
        found = _budget_refusal()
    else:
        pytest.fail(f"{rule_id}: no example refused by this rule (add one to this file)")
    assert found == rule_id


def _plain(text: str) -> str:
    """Text as a rule quotes it: code spans and emphasis left out, whitespace collapsed."""
    return re.sub(r"\s+", " ", text.replace("`", "").replace("**", "")).strip()


def _section(document: str, section: str | None) -> str:
    text = (REPO / document).read_text(encoding="utf-8")
    if section is None:
        return text
    match = re.fullmatch(r"§(\d+)(?:\.(\d+))?", section)
    assert match, f"{section!r} is not a section reference"
    heading = re.search(rf"^## {match[1]}\. .*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert heading, f"{document} has no section {match[1]}"
    body = heading[0]
    if match[2] is None:
        return body
    item = re.search(rf"^{match[2]}\. .*?(?=^\d+\. |\Z)", body, re.MULTILINE | re.DOTALL)
    assert item, f"{document} §{match[1]} has no item {match[2]}"
    return item[0]


@pytest.mark.parametrize("rule", list(REFUSAL_RULES.values()), ids=list(REFUSAL_RULES))
def test_every_refusal_rule_cites_a_place_in_the_repository_that_states_it(rule: RefusalRule) -> None:
    document, _, section = rule.where.partition(" ")
    assert (REPO / document).is_file(), f"{rule.id}: {document} does not exist"
    assert rule.quote and rule.summary
    assert _plain(rule.quote) in _plain(_section(document, section or None)), (
        f"{rule.id}: {rule.where} does not say {rule.quote!r}"
    )
    assert rule.source == f'{rule.where}: "{rule.quote}"'


def test_every_corpus_refusal_names_a_registered_rule() -> None:
    schemas = list(corpus_schemas())
    if not schemas:
        pytest.skip("the shared corpus (../shared/corpus next to the repository) is absent")
    unnamed = [
        (dialect, label)
        for label, parameters in schemas
        for dialect in RULES
        if (result := apply_dialect(dialect, parameters)).refusal is not None
        and result.refusal_rule not in REFUSAL_RULES
    ]
    assert unnamed == []


def test_a_refusal_shows_its_rule_and_source_in_the_json_the_table_and_the_report() -> None:
    dialect, schema = PASS_EXAMPLES["strict.free-form-object"]
    assert dialect == "openai-strict"
    tool = ToolSpec(name="t", description="d", parameters=schema)
    pair = measure_pair(
        "openai-responses", CorpusSchema("free", tool), examples=0, seconds=0.0, fidelity=False
    )
    rule = REFUSAL_RULES["strict.free-form-object"]
    line = pair.line()
    assert (line["verdict"], line["refusal_rule"], line["refusal_source"]) == (
        "refused",
        rule.id,
        rule.source,
    )
    pairs = pairs_frame([pair])
    (note,) = refusal_notes(pairs)
    assert rule.id in note and rule.source in note
    report = to_markdown(pairs, "test")
    assert f"rule {rule.id}" in report and rule.source.replace("|", "\\|") in report


@pytest.mark.parametrize("rule", list(REFUSAL_RULES.values()), ids=list(REFUSAL_RULES))
def test_every_refusal_source_resolves_inside_the_installed_package(rule: RefusalRule) -> None:
    """Issue 36: a refusal cited `docs/provider-schema-rules.md §6`, absent from an installed
    xpeval. Read through importlib.resources, as an installed package is (the wheel's own copy:
    tests/packaging/test_wheel.py)."""
    shipped = source_file(rule.where)
    assert shipped.is_file(), f"{rule.id}: {rule.where} is not inside the xpeval package"
    assert _plain(rule.quote) in _plain(shipped.read_text(encoding="utf-8"))
