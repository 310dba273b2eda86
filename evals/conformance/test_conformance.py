"""The conformance suite every registered adapter runs, wrappers through their effective contract.

Parametrized from ADAPTER_REGISTRY by the plugin (`xpeval_adapter_id`, pytest_plugin.py): adding
a registry entry adds its rows here without touching this file. A check of a tool_choice the
adapter does not declare is skipped (test_capabilities.py checks that it is refused).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

import pytest

from xpeval.adapters.contract import (
    ForceTool,
    ProviderError,
    ToolCall,
    ToolChoice,
    TurnResult,
    UserMessage,
)
from xpeval.adapters.wires import RenderedResponse
from xpeval.evals.conformance._fixtures import (
    TOOL_CHOICES,
    request,
    require_declared,
    scripted,
    tool_results_for,
    two_calls,
    wire_of,
)
from xpeval.evals.emulator import Reply


def _with_every_name(value: object, replacement: object) -> object:
    """`value` with every "name" field (tool names, forced tool) replaced: no SDK takes an int."""
    if isinstance(value, dict):
        return {k: replacement if k == "name" else _with_every_name(v, replacement) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_every_name(v, replacement) for v in value]
    return value


T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("tool_choice", TOOL_CHOICES, ids=["auto", "none", "required", "named"])
def test_encoded_request_validates_against_the_sdk_request_types(
    xpeval_adapter_id: str, tool_choice: ToolChoice, stream: bool
) -> None:
    require_declared(xpeval_adapter_id, tool_choice)
    adapter, _ = scripted(xpeval_adapter_id)
    kwargs = adapter.prepare(request(stream=stream, tool_choice=tool_choice)).kwargs
    wire_of(xpeval_adapter_id).validate_encoded(kwargs)


def test_request_validation_rejects_what_the_sdk_types_reject(xpeval_adapter_id: str) -> None:
    adapter, _ = scripted(xpeval_adapter_id)
    kwargs = adapter.prepare(request()).kwargs
    broken = cast(dict[str, Any], _with_every_name(kwargs, 12345))
    with pytest.raises(ValueError):
        wire_of(xpeval_adapter_id).validate_encoded(broken)


@pytest.mark.parametrize("tool_choice", TOOL_CHOICES, ids=["auto", "none", "required", "named"])
def test_sent_request_offers_every_tool_and_the_chosen_tool_choice(
    xpeval_adapter_id: str, tool_choice: ToolChoice
) -> None:
    require_declared(xpeval_adapter_id, tool_choice)
    adapter, script = scripted(xpeval_adapter_id, Reply(result=TurnResult(text="ok")))
    run(adapter.turn(request(tool_choice=tool_choice)))
    body = json.dumps(script.request_json(0))
    assert '"get_weather"' in body and '"get_time"' in body
    if isinstance(tool_choice, ForceTool):
        assert body.count('"get_time"') >= 2, "the forced tool is named in tool_choice too"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_reply_with_text_and_two_calls_decodes_to_the_same_calls_in_order(
    xpeval_adapter_id: str, stream: bool
) -> None:
    canned = two_calls()
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=canned))
    result = run(adapter.turn(request(stream=stream)))
    assert result.error is None
    assert result.text == canned.text
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        (c.id, c.name, c.arguments) for c in canned.tool_calls
    ]
    assert all(c.parse_error is None for c in result.tool_calls)
    assert result.finish_reason == "tool_calls"
    assert result.usage is not None and result.usage.input_tokens == 12 and result.usage.output_tokens == 7


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_text_only_reply_has_no_calls_and_stops(xpeval_adapter_id: str, stream: bool) -> None:
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=TurnResult(text="It is sunny.")))
    result = run(adapter.turn(request(stream=stream)))
    assert (result.text, result.tool_calls, result.finish_reason, result.error) == (
        "It is sunny.",
        [],
        "stop",
        None,
    )


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_multi_turn_round_trip_sends_results_linked_to_their_calls(
    xpeval_adapter_id: str, stream: bool
) -> None:
    adapter, script = scripted(
        xpeval_adapter_id, Reply(result=two_calls()), Reply(result=TurnResult(text="Paris: 21C, 14:05."))
    )
    first_request = request(stream=stream)
    first = run(adapter.turn(first_request))
    history = [*first_request.messages, first.to_message(), *tool_results_for(first)]
    second_request = first_request.model_copy(update={"messages": history})
    second = run(adapter.turn(second_request))
    assert second.text == "Paris: 21C, 14:05." and second.error is None

    kwargs = adapter.prepare(second_request).kwargs
    wire_of(xpeval_adapter_id).validate_encoded(kwargs)
    sent = json.dumps(script.request_json(1))
    for call in first.tool_calls:
        assert f'"{call.id}"' in sent, f"call id {call.id} missing from the follow-up request"
        assert f"result of {call.name}" in sent


def test_broken_json_arguments_become_a_parse_error_not_an_exception(xpeval_adapter_id: str) -> None:
    broken = ToolCall(id="call_x", name="get_weather", arguments={}, raw_arguments='{"city": "Par')
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=TurnResult(tool_calls=[broken])))
    result = run(adapter.turn(request(stream=True)))
    assert result.error is None
    (call,) = result.tool_calls
    assert call.name == "get_weather"
    if call.raw_arguments is not None and call.raw_arguments.strip():
        # Wires that carry argument text keep it and say why it is not an object.
        assert call.parse_error is not None and call.arguments == {}
    else:
        # Wires whose arguments are JSON objects on the wire cannot carry broken text.
        assert call.parse_error is None


def test_stream_cut_off_mid_call_is_a_value_never_an_exception(xpeval_adapter_id: str) -> None:
    wire = wire_of(xpeval_adapter_id)
    full = wire.render(two_calls(), model="m", stream=True)
    cut = RenderedResponse(
        status=200, headers=full.headers, chunks=full.chunks[: max(1, len(full.chunks) // 2)]
    )
    cut = RenderedResponse(status=200, headers=cut.headers, chunks=[*cut.chunks, b'data: {"trunc'])
    adapter, _ = scripted(xpeval_adapter_id, Reply(raw=cut))
    result = run(adapter.turn(request(stream=True)))
    assert isinstance(result, TurnResult)
    whole = [c for c in result.tool_calls if c.parse_error is None]
    assert result.error is not None or len(whole) < 2 or any(c.parse_error for c in result.tool_calls)


def test_rate_limit_is_a_retryable_provider_error_with_its_retry_after(xpeval_adapter_id: str) -> None:
    limited = ProviderError(status=429, type="rate_limit_error", message="slow down", retry_after=7)
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=TurnResult(error=limited)))
    result = run(adapter.turn(request()))
    assert result.error is not None
    assert (result.error.status, result.error.retry_after, result.error.retryable) == (429, 7.0, True)
    assert "slow down" in result.error.message


def test_server_error_is_retryable_and_bad_request_is_not(xpeval_adapter_id: str) -> None:
    adapter, _ = scripted(
        xpeval_adapter_id,
        Reply(result=TurnResult(error=ProviderError(status=503, type="overloaded", message="busy"))),
        Reply(
            result=TurnResult(error=ProviderError(status=400, type="invalid_request_error", message="bad"))
        ),
    )
    busy, bad = run(adapter.turn(request())), run(adapter.turn(request()))
    assert busy.error is not None and busy.error.retryable
    assert bad.error is not None and not bad.error.retryable and bad.error.status == 400


def test_error_inside_a_200_stream_is_a_provider_error(xpeval_adapter_id: str) -> None:
    in_stream = ProviderError(type="overloaded_error", message="try later", kind="stream", status=503)
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=TurnResult(error=in_stream)))
    result = run(adapter.turn(request(stream=True)))
    assert result.error is not None
    assert result.error.kind == "stream"
    assert "try later" in result.error.message
    assert result.finish_reason == "error"


@pytest.mark.parametrize("body", [b"<html>bad gateway</html>", b"", b'{"unexpected": true'])
def test_undecodable_body_is_a_provider_error(xpeval_adapter_id: str, body: bytes) -> None:
    raw = RenderedResponse(status=200, headers={"content-type": "application/json"}, chunks=[body])
    adapter, _ = scripted(xpeval_adapter_id, Reply(raw=raw))
    result = run(adapter.turn(request()))
    assert result.error is not None


def test_turn_never_raises_when_the_transport_fails(xpeval_adapter_id: str) -> None:
    import httpx2

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter

    adapter = create_adapter(
        xpeval_adapter_id, AdapterSettings(transport=httpx2.MockTransport(refuse), timeout=5)
    )
    result = run(adapter.turn(request(messages=[UserMessage(content="hi")])))
    assert result.error is not None and result.error.kind == "connection" and result.error.retryable
