"""Property-based tool-call fuzzing, for every registered adapter.

Whatever calls a provider returns (any names, nested argument values, unicode, many calls,
text beside them, streamed or not), the adapter decodes exactly those calls in order; and
whatever argument text a model produces, decoding never raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.evals.conformance._fixtures import request, scripted
from xpeval.evals.emulator import Reply

NAMES = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,40}", fullmatch=True)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(max_size=30)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(st.text(min_size=1, max_size=12), JSON, max_size=5)
CALLS = st.lists(st.tuples(NAMES, ARGUMENTS), min_size=1, max_size=4)
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(coro: Coroutine[Any, Any, TurnResult]) -> TurnResult:
    return asyncio.run(coro)


@FUZZ
@given(calls=CALLS, text=st.none() | st.text(min_size=1, max_size=40), stream=st.booleans())
def test_any_calls_the_provider_returns_decode_exactly(
    xpeval_adapter_id: str, calls: list[tuple[str, dict[str, Any]]], text: str | None, stream: bool
) -> None:
    canned = TurnResult(
        text=text,
        tool_calls=[
            ToolCall(id=f"call_{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)
        ],
    )
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=canned))
    result = run(adapter.turn(request(stream=stream)))
    assert result.error is None, result.error
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert all(c.parse_error is None for c in result.tool_calls)
    if text is not None and text.strip():
        assert result.text is not None and result.text.strip() == text.strip()


@FUZZ
@given(
    raw=st.text(max_size=60) | st.binary(max_size=40).map(lambda b: b.decode("latin-1")), stream=st.booleans()
)
def test_any_argument_text_decodes_without_raising(xpeval_adapter_id: str, raw: str, stream: bool) -> None:
    canned = TurnResult(
        tool_calls=[ToolCall(id="call_0", name="get_weather", arguments={}, raw_arguments=raw)]
    )
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=canned))
    result = run(adapter.turn(request(stream=stream)))
    assert isinstance(result, TurnResult)
    for call in result.tool_calls:
        assert isinstance(call.arguments, dict)
        assert call.parse_error is None or call.arguments == {}
