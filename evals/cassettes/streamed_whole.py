"""Streamed = whole: every recorded stream, re-chunked, decodes to what its whole reply decodes to.

A recorded stream's whole reply is the non-streamed body its own frames spell (the wire's
reframer reads it: `xpeval.adapters.wires.reframe`); its decode through the wire's plain path is
the reference. The same reply is then served in other shapes (the wire's reframer draws one
from a random source) and cut into arbitrary byte pieces, and each is decoded through the
wire's streaming path (its SDK, then its accumulator). Every decoded field a user relies on must
be equal (`differences`). docs/stream-shapes.md lists the shapes and where servers send them.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

import httpx2

from xpeval.adapters.adapter import Adapter, AdapterSettings
from xpeval.adapters.contract import JsonObject, TurnResult, WireName
from xpeval.adapters.registry import create_adapter, direct_adapter_for_wire
from xpeval.adapters.wires import Wire, get_wire, wire_for_path
from xpeval.adapters.wires.reframe import Reframer, byte_split, reframer_for
from xpeval.evals.cassettes.format import load_cassette

_DROPPED_HEADERS = ("content-length", "content-encoding", "transfer-encoding")


@dataclass(frozen=True)
class RecordedStream:
    """One recorded 200 streamed response of a wire, with where it came from."""

    source: str
    wire: WireName
    url: str
    headers: dict[str, str]
    body: bytes


def recorded_streams(paths: Iterable[Path]) -> list[RecordedStream]:
    """Every 200 streamed response in the cassettes at `paths` whose URL a registered wire serves."""
    found: list[RecordedStream] = []
    for path in paths:
        for number, interaction in enumerate(load_cassette(path)):
            wire = wire_for_path(interaction.uri)
            if wire is None or interaction.status != 200:
                continue
            if not wire.is_stream(interaction.uri, interaction.request_json()):
                continue
            headers, body = wire.replayable_response(
                interaction.uri, interaction.flat_response_headers(), interaction.response_body
            )
            kept = {k: v for k, v in headers.items() if k.lower() not in _DROPPED_HEADERS}
            found.append(RecordedStream(f"{path}#{number}", wire.name, interaction.uri, kept, body))
    return found


class _Served:
    """A transport answering each request with the response set for it (one at a time)."""

    def __init__(self) -> None:
        self.next: httpx2.Response | None = None

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        response, self.next = self.next, None
        if response is None:
            raise RuntimeError(f"no response set for {request.method} {request.url}")
        return response


async def _pieces(chunks: Sequence[bytes]) -> Any:
    for chunk in chunks:
        yield chunk


class WireDecoder:
    """An adapter of one wire (its direct one unless named), decoding the bodies handed to it
    through its SDK and its wire."""

    def __init__(self, wire: WireName, adapter_id: str | None = None) -> None:
        self.wire: Wire = get_wire(wire)
        self._served = _Served()
        settings = AdapterSettings(transport=httpx2.MockTransport(self._served), timeout=30.0)
        self.adapter: Adapter = create_adapter(adapter_id or direct_adapter_for_wire(wire), settings)

    async def streamed(self, headers: dict[str, str], chunks: Sequence[bytes]) -> TurnResult:
        self._served.next = httpx2.Response(200, headers=headers, content=_pieces(chunks))
        return await self._send(stream=True)

    async def whole(self, body: JsonObject | bytes) -> TurnResult:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        self._served.next = httpx2.Response(
            200, headers={"content-type": "application/json"}, content=content
        )
        return await self._send(stream=False)

    async def _send(self, *, stream: bool) -> TurnResult:
        kwargs = self.wire.minimal_request("recorded-model")
        kwargs["stream"] = stream
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return await self.adapter.send(kwargs)

    async def aclose(self) -> None:
        await self.adapter.aclose()


def _calls(result: TurnResult) -> list[tuple[Any, ...]]:
    return [(c.id, c.name, c.arguments, c.parse_error is None, c.provider_data) for c in result.tool_calls]


def _usage(result: TurnResult) -> tuple[int | None, ...] | None:
    usage = result.usage
    return None if usage is None else (usage.input_tokens, usage.output_tokens, usage.total_tokens)


def differences(whole: TurnResult, streamed: TurnResult) -> list[str]:
    """What the streamed decode says differently from the whole one (empty: equal). An error
    value on either side is a difference naming it."""
    if whole.error is not None:
        return [f"the whole reply does not decode: {whole.error.kind}: {whole.error.message}"]
    if streamed.error is not None:
        return [f"the stream decodes to an error: {streamed.error.kind}: {streamed.error.message}"]
    found = []
    for name, mine, theirs in (
        ("calls", _calls(whole), _calls(streamed)),
        ("text", whole.text, streamed.text),
        ("reasoning", whole.reasoning, streamed.reasoning),
        ("refusal", whole.refusal, streamed.refusal),
        (
            "finish_reason",
            (whole.finish_reason, whole.raw_finish_reason),
            (streamed.finish_reason, streamed.raw_finish_reason),
        ),
        ("usage", _usage(whole), _usage(streamed)),
        ("provider_data", whole.provider_data, streamed.provider_data),
    ):
        if mine != theirs:
            found.append(f"{name}: whole {mine!r} != streamed {theirs!r}")
    return found


@dataclass(frozen=True)
class Check:
    """One re-chunking of one recorded stream, and what its decode said against the whole's."""

    source: str
    how: str
    problems: tuple[str, ...]


async def check_stream(
    stream: RecordedStream, decoder: WireDecoder, rng: Random, reshapes: int, *, recorded: bool = True
) -> list[Check] | None:
    """The recorded stream itself cut into byte pieces (`recorded`), and `reshapes` other
    shapes of its reply (half of them cut too), each against the whole reply's decode. None
    when the wire has no reframer or the stream spells no whole reply (an error frame, no
    terminal event)."""
    reframer: Reframer | None = reframer_for(stream.wire)
    whole_body = reframer.whole(stream.body) if reframer is not None else None
    if reframer is None or whole_body is None:
        return None
    reference = await decoder.whole(whole_body)
    checks = []
    if recorded:
        checks.append(
            await _one(stream, decoder, reference, "recorded, byte-split", byte_split(stream.body, rng))
        )
    for number in range(reshapes):
        frames = reframer.reframe(whole_body, rng)
        chunks = byte_split(b"".join(frames), rng) if rng.random() < 0.5 else frames
        checks.append(await _one(stream, decoder, reference, f"reshaped #{number}", chunks))
    return checks


async def _one(
    stream: RecordedStream, decoder: WireDecoder, reference: TurnResult, how: str, chunks: list[bytes]
) -> Check:
    result = await decoder.streamed(stream.headers, chunks)
    problems = differences(reference, result)
    if problems:
        problems.append("chunks: " + repr(b"".join(chunks)[:2000]))
    return Check(stream.source, how, tuple(problems))
