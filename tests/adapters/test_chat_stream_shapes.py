"""OpenAI Chat streams in the shapes real servers send (docs/stream-shapes.md), each decoded to
what the same reply decodes to whole.

The reference is the whole reply, never the openai SDK's accumulator: the SDK merges every
piece streamed at one index, so it glues parallel calls that share an index into one.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from xpeval.adapters.contract import TurnResult
from xpeval.adapters.wires import RenderedResponse
from xpeval.evals.conformance._fixtures import request, scripted
from xpeval.evals.emulator import Reply

BASE = {"id": "chatcmpl-shape", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return f"data: {json.dumps({**BASE, 'choices': choices, 'usage': usage})}\n\n".encode()


def _piece(
    index: int | None, *, id: str | None = None, name: str | None = None, args: str | None = None
) -> Any:
    piece: dict[str, Any] = {"index": index} if index is not None else {}
    if id is not None:
        piece.update(id=id, type="function")
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    if function:
        piece["function"] = function
    return _chunk({"tool_calls": [piece]})


def _streamed(*frames: bytes) -> TurnResult:
    usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
    ending = [_chunk({}, "tool_calls"), _chunk_usage(usage), b"data: [DONE]\n\n"]
    raw = RenderedResponse(200, {"content-type": "text/event-stream"}, [*frames, *ending])
    adapter, _ = scripted("openai-chat", Reply(raw=raw))
    return asyncio.run(adapter.turn(request(stream=True)))


def _chunk_usage(usage: dict[str, int]) -> bytes:
    return f"data: {json.dumps({**BASE, 'choices': [], 'usage': usage})}\n\n".encode()


def _calls(result: TurnResult) -> list[tuple[str | None, str, dict[str, Any]]]:
    assert result.error is None, result.error
    return [(c.id, c.name, c.arguments) for c in result.tool_calls]


WEATHER = '{"city": "Paris", "unit": "celsius"}'
TIME = '{"zone": "Europe/Paris"}'


def test_parallel_calls_all_at_index_0_with_ids_stay_two_calls() -> None:
    # sglang's gemma4 parser (sgl-project/sglang#38198): both calls at index 0, different ids,
    # the id and name in one chunk, the arguments in the next.
    result = _streamed(
        _piece(0, id="call_a", name="get_weather", args=""),
        _piece(0, args=WEATHER),
        _piece(0, id="call_b", name="get_time", args=""),
        _piece(0, args=TIME),
    )
    assert _calls(result) == [
        ("call_a", "get_weather", json.loads(WEATHER)),
        ("call_b", "get_time", json.loads(TIME)),
    ]


def test_parallel_calls_all_at_index_0_without_ids_are_not_merged_into_one_name() -> None:
    # Ollama's OpenAI-compatible stream: every call whole in one chunk at index 0, no id; the
    # SDK's accumulator makes one call `get_weatherget_time` with both argument texts glued.
    result = _streamed(_piece(0, name="get_weather", args=WEATHER), _piece(0, name="get_time", args=TIME))
    assert _calls(result) == [
        (None, "get_weather", json.loads(WEATHER)),
        (None, "get_time", json.loads(TIME)),
    ]


def test_the_same_tool_twice_at_index_0_without_ids_is_two_calls() -> None:
    # The arguments of the second call would otherwise be glued onto the first
    # (`{"city": ...}{"city": ...}`: jaseci-labs/jac#7673's spliced arguments).
    result = _streamed(
        _piece(0, name="get_weather", args='{"city": "Paris"}'),
        _piece(0, name="get_weather", args='{"city": "Rome"}'),
    )
    assert _calls(result) == [
        (None, "get_weather", {"city": "Paris"}),
        (None, "get_weather", {"city": "Rome"}),
    ]


def test_a_name_repeated_on_every_piece_continues_the_same_call() -> None:
    result = _streamed(
        _piece(0, id="call_a", name="get_weather", args='{"city": '),
        _piece(0, name="get_weather", args='"Paris", "unit": "celsius"}'),
    )
    assert _calls(result) == [("call_a", "get_weather", json.loads(WEATHER))]


def test_interleaved_parallel_calls_keep_their_own_arguments() -> None:
    result = _streamed(
        _piece(0, id="call_a", name="get_weather"),
        _piece(1, id="call_b", name="get_time"),
        _piece(0, args=WEATHER[:10]),
        _piece(1, args=TIME[:7]),
        _piece(0, args=WEATHER[10:]),
        _piece(1, args=TIME[7:]),
    )
    assert _calls(result) == [
        ("call_a", "get_weather", json.loads(WEATHER)),
        ("call_b", "get_time", json.loads(TIME)),
    ]


def test_pieces_without_an_index_continue_the_last_call() -> None:
    # Servers that omit `index` (sgl-project/sglang#5661, ollama/ollama#7881) still split arguments.
    result = _streamed(
        _piece(None, id="call_a", name="get_weather", args=WEATHER[:12]),
        _piece(None, args=WEATHER[12:]),
        _piece(None, id="call_b", name="get_time", args=TIME),
    )
    assert _calls(result) == [
        ("call_a", "get_weather", json.loads(WEATHER)),
        ("call_b", "get_time", json.loads(TIME)),
    ]


def test_arguments_streamed_at_another_index_than_their_call_are_an_error_naming_why() -> None:
    # LibreChat's agents API (danny-avila/LibreChat#13987): the id and name at one index, the
    # arguments at another; the whole reply has one call, so no silent "no call" and no guess.
    result = _streamed(_piece(2, id="call_a", name="get_weather", args=""), _piece(1, args=WEATHER))
    assert result.error is not None and result.error.kind == "decode"
    assert "never a name" in result.error.message and "index 1" in result.error.message
