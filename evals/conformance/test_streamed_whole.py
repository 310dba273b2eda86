"""Streamed = whole, for every registered adapter (plugins' included): a reply streamed in any
chunking decodes to what the same reply decodes to whole (docs/stream-shapes.md).

Any reply the wire renders (hypothesis draws its calls, the same tool twice among them, its
text and usage) is decoded whole, then streamed cut into arbitrary byte pieces and, where the
wire has a reframer (`xpeval.adapters.wires.reframe`), streamed again in another server's
shape; every decoded field must be equal. The project's own recorded streams for the adapter
are checked the same way against the whole reply their frames spell; a wire without a
reframer has no whole reading of a recording, so its recordings are checked cut against uncut.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xpeval.adapters.contract import ToolCall, TurnResult, Usage
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.wires import get_wire
from xpeval.adapters.wires.reframe import byte_split, reframer_for
from xpeval.evals.cassettes import CassetteStore
from xpeval.evals.cassettes.streamed_whole import (
    RecordedStream,
    WireDecoder,
    check_stream,
    differences,
    recorded_streams,
)

RECORDED_PER_ADAPTER = 8
"""How many of the project's recorded streams each adapter re-chunks here (the bound of a CI
run; benchmarks/stream_rechunk.py takes every one, many times)."""

ARGUMENT_VALUES = st.one_of(
    st.text(max_size=20), st.integers(-1000, 1000), st.booleans(), st.lists(st.integers(0, 9), max_size=3)
)
CALL = st.tuples(
    st.sampled_from(["get_weather", "get_time"]),
    st.dictionaries(st.sampled_from(["city", "unit", "zone", "days"]), ARGUMENT_VALUES, max_size=3),
)
FAMILY = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reply(
    calls: list[tuple[str, dict[str, Any]]], text: str | None, usage: tuple[int, int] | None
) -> TurnResult:
    return TurnResult(
        text=text,
        tool_calls=[
            ToolCall(id=f"call_{n}", name=name, arguments=args) for n, (name, args) in enumerate(calls)
        ],
        usage=Usage(input_tokens=usage[0], output_tokens=usage[1], total_tokens=sum(usage))
        if usage
        else None,
    )


async def _check_rendered(adapter_id: str, reply: TurnResult, rng: Random) -> list[str]:
    wire = get_wire(effective_contract(adapter_id).wire)
    whole = wire.render(reply, model="emulated-model", stream=False)
    streamed = wire.render(reply, model="emulated-model", stream=True)
    decoder = WireDecoder(wire.name, adapter_id)
    try:
        reference = await decoder.whole(whole.body)
        shapes = {"rendered, byte-split": byte_split(streamed.body, rng)}
        reframer = reframer_for(wire.name)
        if reframer is not None:
            shapes["reshaped"] = reframer.reframe(json.loads(whole.body), rng)
        problems = []
        for how, chunks in shapes.items():
            result = await decoder.streamed(streamed.headers, chunks)
            problems += [f"{how}: {p}" for p in differences(reference, result)]
        return problems
    finally:
        await decoder.aclose()


@FAMILY
@given(
    calls=st.lists(CALL, max_size=4),
    text=st.none() | st.text(min_size=1, max_size=40),
    usage=st.none() | st.tuples(st.integers(1, 5000), st.integers(1, 5000)),
    rng=st.randoms(use_true_random=False),
)
def test_a_reply_streamed_in_any_chunking_decodes_to_the_same_reply_whole(
    xpeval_adapter_id: str,
    calls: list[tuple[str, dict[str, Any]]],
    text: str | None,
    usage: tuple[int, int] | None,
    rng: Random,
) -> None:
    problems = asyncio.run(_check_rendered(xpeval_adapter_id, _reply(calls, text, usage), rng))
    assert not problems, "\n".join(problems)


def _recorded(store: CassetteStore, adapter_id: str) -> list[RecordedStream]:
    folder = store.root / adapter_id
    paths = sorted(folder.glob("**/*.yaml")) if folder.is_dir() else []
    wire = effective_contract(adapter_id).wire
    return [s for s in recorded_streams(paths) if s.wire == wire][:RECORDED_PER_ADAPTER]


async def _check_recorded(adapter_id: str, streams: list[RecordedStream]) -> list[str]:
    decoder = WireDecoder(streams[0].wire, adapter_id)
    problems: list[str] = []
    try:
        for stream in streams:
            rng = Random(stream.source)
            checks = await check_stream(stream, decoder, rng, 1)
            if checks is not None:
                problems += [f"{c.source} ({c.how}): {' | '.join(c.problems)}" for c in checks if c.problems]
                continue
            # No whole reading (no reframer, or the stream ends in an error): cut against uncut.
            uncut = await decoder.streamed(stream.headers, [stream.body])
            cut = await decoder.streamed(stream.headers, byte_split(stream.body, rng))
            if cut != uncut:
                problems.append(f"{stream.source}: cut {cut!r} != uncut {uncut!r}")
    finally:
        await decoder.aclose()
    return problems


def test_the_projects_recorded_streams_rechunked_decode_to_their_whole_reply(
    xpeval_adapter_id: str, xpeval_cassette_store: CassetteStore
) -> None:
    streams = _recorded(xpeval_cassette_store, xpeval_adapter_id)
    if not streams:
        pytest.skip(f"no recorded stream for {xpeval_adapter_id} under {Path(xpeval_cassette_store.root)}")
    problems = asyncio.run(_check_recorded(xpeval_adapter_id, streams))
    assert not problems, "\n".join(problems[:5])
