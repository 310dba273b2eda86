"""Reading schema files of any depth: same values as `json`, no RecursionError, clear errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xpeval.adapters.schema import safe_json
from xpeval.adapters.schema.safe_json import _parse_iteratively

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=JSON_VALUES, indent=st.sampled_from([None, 2]))
def test_the_iterative_parser_reads_what_json_reads(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert _parse_iteratively(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    ['{"a":1,}', "[1,]", '{"a" 1}', "[1 2]", "{1:2}", "[", '{"a":1}}', '{"a":1} x', "", "01", '{"a":}'],
)
def test_invalid_json_is_a_decode_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        _parse_iteratively(text)
    with pytest.raises(json.JSONDecodeError):
        safe_json.loads(text)


def test_a_20000_deep_document_is_read_without_recursion_error() -> None:
    text = '{"a":' * 20_000 + "[1]" + "}" * 20_000
    value = safe_json.loads(text)
    assert safe_json.nesting_depth(value) == 20_001


def test_a_depth_limit_refuses_deeper_documents_clearly() -> None:
    with pytest.raises(safe_json.JsonDepthError, match="more than 100 levels"):
        safe_json.loads("[" * 5_000 + "]" * 5_000, max_depth=100)
    assert safe_json.loads("[[1]]", max_depth=2) == [[1]]
