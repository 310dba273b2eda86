"""SSE cassettes replay through each SDK's streaming path, and always finish.

An open vcrpy issue reports SSE replay hanging. Every registered adapter records a streamed
episode from the loopback emulator (frames flushed one by one over real HTTP), then replays it
under a hard time bound: the replayed result must equal the recorded one, well within it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cassettes._episodes import MODEL, SIMPLE, answer, builtin_case, play, request_for
from xpeval.evals.cassettes import CassetteStore, Mode, load_cassette
from xpeval.evals.emulator import EmulatorServer, Reply

CASE = builtin_case(SIMPLE)
REPLAY_BOUND = 10.0


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


@pytest.mark.timeout(60)
def test_a_recorded_sse_episode_replays_within_a_time_bound(
    xpeval_adapter_id: str, emulator: EmulatorServer, tmp_path: Path
) -> None:
    store = CassetteStore(tmp_path)
    long_text = "Converting now: 26.2 miles is about 42.16 kilometres. " * 4
    script = emulator.script([Reply(result=answer(text=long_text))])
    request = request_for(CASE, stream=True)

    async def record_then_replay() -> None:
        recorded = await play(
            store, xpeval_adapter_id, CASE, Mode.RECORD, [request], upstream=emulator.transport(script)
        )
        assert recorded.problems == [] and recorded.results[0].error is None
        assert recorded.results[0].text == long_text
        body = load_cassette(store.path(xpeval_adapter_id, SIMPLE, MODEL))[0].response_body
        frames = max(body.count(b"data:"), body.count(b":event-type"))  # SSE, or AWS eventstream
        assert frames > 3, "the recording holds the stream's frames as sent"
        replayed = await asyncio.wait_for(
            play(store, xpeval_adapter_id, CASE, Mode.REPLAY, [request]), REPLAY_BOUND
        )
        assert replayed.problems == []
        assert replayed.results[0].text == long_text
        assert replayed.results[0].tool_calls == recorded.results[0].tool_calls
        assert replayed.results[0].finish_reason == recorded.results[0].finish_reason

    asyncio.run(record_then_replay())


@pytest.mark.timeout(60)
def test_a_stream_cut_short_while_recording_is_never_replayed_as_complete(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    store = CassetteStore(tmp_path)
    script = emulator.script([Reply(result=answer(text="x" * 200), truncate_after=3)])
    request = request_for(CASE, stream=True)

    async def record_then_replay() -> list[str]:
        recorded = await play(
            store, "openai-chat", CASE, Mode.RECORD, [request], upstream=emulator.transport(script)
        )
        assert recorded.results[0].error is not None and recorded.results[0].error.kind == "connection"
        replayed = await play(store, "openai-chat", CASE, Mode.REPLAY, [request])
        return replayed.problems

    [problem] = asyncio.run(asyncio.wait_for(record_then_replay(), REPLAY_BOUND))
    assert "matches no recorded interaction" in problem
