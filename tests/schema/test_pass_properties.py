"""Properties every dialect pass keeps on arbitrary schemas (hypothesis).

- it never raises and never modifies its input;
- it is idempotent: rewriting its own output changes nothing;
- what an adapter would send has no acceptance violation (the independent checker), unless the
  adapter refused the tool;
- a rewrite that reports no weakening loss is faithful: instances generated from the original
  (hypothesis-jsonschema) validate against the rewrite, and instances generated from the rewrite
  validate against the original (0 false rejections, 0 loss rate).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis_jsonschema import from_schema
from hypothesis_jsonschema._canonicalise import HypothesisRefResolutionError
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests.schema.strategies import lean_tool_schemas, sent_tool_schemas, tool_schemas
from xpeval.adapters.contract import ToolSpec
from xpeval.adapters.schema import DIALECTS, Dialect, PassResult, apply_dialect
from xpeval.adapters.schema.openapi import as_json_schema
from xpeval.adapters.schema.refusals import REFUSAL_RULES
from xpeval.evals.acceptance.measure import CorpusSchema, measure_pair

_FAST = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
_FIDELITY = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _meaning(dialect: Dialect, schema: dict[str, Any]) -> dict[str, Any]:
    return as_json_schema(schema) if dialect == "gemini-openapi" else schema


@pytest.mark.parametrize("dialect", DIALECTS)
@_FAST
@given(schema=tool_schemas())
def test_a_pass_never_raises_never_mutates_and_is_idempotent(
    dialect: Dialect, schema: dict[str, Any]
) -> None:
    before = copy.deepcopy(schema)
    first = apply_dialect(dialect, schema)
    assert schema == before
    assert isinstance(first, PassResult)
    assert (first.schema_ is None) == (first.refusal is not None)
    if first.schema_ is None:
        return
    json.dumps(first.schema_)  # what is sent is plain JSON
    second = apply_dialect(dialect, first.schema_)
    assert second.refusal is None, second.refusal
    assert second.schema_ == first.schema_


@_FAST
@given(schema=st.one_of(tool_schemas(), sent_tool_schemas()))
def test_what_an_adapter_sends_has_no_acceptance_violation_unless_refused(
    xpeval_adapter_id: str, schema: dict[str, Any]
) -> None:
    tool = ToolSpec(name="generated_tool", description="generated", parameters=schema)
    pair = measure_pair(
        xpeval_adapter_id, CorpusSchema("generated", tool), examples=0, seconds=0.0, fidelity=False
    )
    if pair.verdict == "refused":
        assert pair.refusal, "a refusal says why"
        assert pair.refusal_rule in REFUSAL_RULES and pair.refusal_source, "and names its rule and source"
        return
    assert pair.violations == [], [v.model_dump() for v in pair.violations]


FOUND_BY_THE_PROPERTY_TEST = {
    "type": "object",
    "properties": {
        "a": {"allOf": [{"type": ["string", "null"], "enum": ["a", "b"]}, {"$ref": "#/definitions/Old"}]}
    },
    "definitions": {"Old": {"anyOf": [{"type": "string"}]}},
}
"""An enum beside an anyOf once lost its `type: string` on Gemini `parameters` (refused by its rules)."""


def test_an_enum_beside_an_any_of_keeps_its_type_on_gemini_parameters(xpeval_adapter_id: str) -> None:
    tool = ToolSpec(name="found", description="found", parameters=FOUND_BY_THE_PROPERTY_TEST)
    pair = measure_pair(
        xpeval_adapter_id, CorpusSchema("found", tool), examples=0, seconds=0.0, fidelity=False
    )
    assert pair.verdict == "refused" or pair.violations == [], [v.model_dump() for v in pair.violations]


_CANNOT_GENERATE = (
    InvalidArgument,
    HypothesisRefResolutionError,
    RecursionError,
    ValueError,
    TypeError,
    KeyError,
)


def _instances(data: Any, schema: dict[str, Any], label: str) -> Any:
    """An instance of `schema` from hypothesis-jsonschema (the example is skipped for a schema it
    cannot generate from, such as a recursive one)."""
    try:
        Draft202012Validator.check_schema(schema)
        strategy = from_schema(schema)
    except (*_CANNOT_GENERATE, SchemaError):
        assume(False)
    try:
        return data.draw(strategy, label=label)
    except _CANNOT_GENERATE:
        assume(False)


@pytest.mark.parametrize("dialect", DIALECTS)
@_FIDELITY
@given(schema=lean_tool_schemas(), data=st.data())
def test_a_rewrite_that_reports_no_loss_keeps_every_valid_call_and_admits_no_new_one(
    dialect: Dialect, schema: dict[str, Any], data: Any
) -> None:
    result = apply_dialect(dialect, schema)
    assume(result.schema_ is not None)
    assume(all(loss.exact for loss in result.losses))
    assert result.schema_ is not None
    rewritten = _meaning(dialect, result.schema_)
    as_object = {"allOf": [schema, {"type": "object"}], "$defs": schema.get("$defs", {})}
    as_object["definitions"] = schema.get("definitions", {})

    original_call = _instances(data, as_object, "call valid under the original")
    sent = result.arguments_to_wire(original_call)
    assert Draft202012Validator(rewritten).is_valid(sent), "false rejection"

    wire_call = _instances(data, rewritten, "call valid under the rewrite")
    restored = result.restore_arguments(wire_call)
    assert Draft202012Validator(schema).is_valid(restored), "constraint lost"
