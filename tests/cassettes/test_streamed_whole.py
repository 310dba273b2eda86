"""Streamed = whole on every recorded stream: the shared corpus's, the new wires' and the
project's committed cassettes (docs/stream-shapes.md).

Every recorded stream is cut into byte pieces and served again in another shape of the same
reply, and each decodes to what the whole reply its frames spell decodes to. A bounded pass
here (one shape per stream, plus hypothesis's own draws); benchmarks/stream_rechunk.py runs
at least 1,000 re-chunkings per wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from random import Random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._corpus import REPO_ROOT, corpus_files
from xpeval.adapters.contract import WireName
from xpeval.adapters.wires.reframe import reframer_for
from xpeval.evals.cassettes.streamed_whole import (
    Check,
    RecordedStream,
    WireDecoder,
    check_stream,
    recorded_streams,
)

CASSETTE_FILES = [
    *corpus_files("cassettes/*/*.yaml"),
    *corpus_files("new-wires/*/*.yaml"),
    *corpus_files("new-wires/*/*.yaml.gz"),
    *sorted((REPO_ROOT / "cassettes").glob("**/*.yaml")),
]


def _distinct(streams: list[RecordedStream]) -> list[RecordedStream]:
    """One stream per (wire, body): the committed cassettes repeat replies across wrappers."""
    seen: set[tuple[str, bytes]] = set()
    kept = []
    for stream in streams:
        if (stream.wire, stream.body) not in seen:
            seen.add((stream.wire, stream.body))
            kept.append(stream)
    return kept


STREAMS = _distinct(recorded_streams(CASSETTE_FILES))
WIRES: list[WireName] = sorted({s.wire for s in STREAMS if reframer_for(s.wire) is not None})


def _of(wire: WireName) -> list[RecordedStream]:
    return [s for s in STREAMS if s.wire == wire]


def _run(
    wire: WireName, draws: Iterator[tuple[RecordedStream, Random]], reshapes: int, *, alternate: bool = False
) -> tuple[int, list[Check]]:
    """Every drawn re-chunking checked; `alternate`: one check a stream, the recorded bytes cut
    for every other stream and another shape for the rest (the bound of the CI pass)."""

    async def go() -> tuple[int, list[Check]]:
        decoder = WireDecoder(wire)
        checked, failed = 0, []
        try:
            for number, (stream, rng) in enumerate(draws):
                recorded = not alternate or number % 2 == 0
                count = (0 if recorded else 1) if alternate else reshapes
                checks = await check_stream(stream, decoder, rng, count, recorded=recorded)
                for check in checks or []:
                    checked += 1
                    if check.problems:
                        failed.append(check)
        finally:
            await decoder.aclose()
        return checked, failed

    return asyncio.run(go())


def _report(failed: list[Check]) -> str:
    return "\n".join(f"{c.source} ({c.how}):\n  " + "\n  ".join(c.problems) for c in failed[:3])


def test_every_wire_with_recorded_streams_has_a_reframer() -> None:
    assert sorted({s.wire for s in STREAMS} - set(WIRES)) == []


@pytest.mark.parametrize("wire", WIRES)
def test_every_recorded_stream_rechunked_decodes_to_its_whole_reply(wire: WireName) -> None:
    streams = _of(wire)
    checked, failed = _run(wire, ((s, Random(s.source)) for s in streams), reshapes=1, alternate=True)
    assert not failed, f"{len(failed)} of {checked} re-chunkings differ:\n{_report(failed)}"
    assert checked >= 0.9 * len(streams), (
        f"only {checked} of {len(streams)} recorded streams spell a whole reply"
    )


@pytest.mark.parametrize("wire", WIRES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_rechunking_of_a_recorded_stream_decodes_to_its_whole_reply(
    wire: WireName, data: st.DataObject
) -> None:
    stream = data.draw(st.sampled_from(_of(wire)), label="stream")
    rng = data.draw(st.randoms(use_true_random=False), label="shape")
    _checked, failed = _run(wire, iter([(stream, rng)]), reshapes=2)
    assert not failed, _report(failed)


def test_the_old_index_keyed_accumulator_is_caught_by_the_strategy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The strategy finds the bug it was written for: an accumulator keyed by index alone (the
    openai SDK's rule) decodes some re-chunkings of the corpus's parallel calls wrongly."""
    from xpeval.adapters.wires import openai_chat

    def by_index_only(self: openai_chat._PendingCall, piece: object) -> bool:
        return False

    monkeypatch.setattr(openai_chat._PendingCall, "starts_another", by_index_only)
    parallel = [s for s in _of("openai-chat") if b'"index":1' in s.body and b"tool_calls" in s.body]
    if not parallel:
        pytest.skip("no recorded OpenAI Chat stream with parallel calls")
    draws = ((s, Random(f"{s.source}/{n}")) for s in parallel[:5] for n in range(8))
    _checked, failed = _run("openai-chat", draws, reshapes=2)
    assert failed, "index-keyed accumulation must fail on calls sharing an index"


def test_the_committed_cassettes_are_read() -> None:
    assert any(str(Path("cassettes")) in s.source for s in STREAMS)
