"""Record mode: new and changed episodes are saved whole, scrubbed, with their provenance."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.cassettes._episodes import (
    MODEL,
    SIMPLE,
    answer,
    builtin_case,
    play,
    record,
    replay,
    request_for,
    scripted,
)
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.registry import create_adapter
from xpeval.adapters.wires import get_wire
from xpeval.evals.cassettes import CassetteStore, Mode, bind_cassette
from xpeval.evals.emulator import Reply, ScriptedTransport
from xpeval.evals.version import xpeval_version

CASE = builtin_case(SIMPLE)


@pytest.fixture
def store(tmp_path: Path) -> CassetteStore:
    return CassetteStore(tmp_path / "cassettes")


def test_metadata_says_where_when_and_for_what_the_recording_was_made(store: CassetteStore) -> None:
    before = datetime.now(UTC)
    record(store, "anthropic-messages", CASE, [request_for(CASE)], source="local-model")
    meta = store.meta(store.path("anthropic-messages", SIMPLE, MODEL))
    assert meta is not None
    assert (meta.source, meta.model, meta.adapter, meta.case) == (
        "local-model",
        "test-model",
        "anthropic-messages",
        SIMPLE,
    )
    assert meta.xpeval_version == xpeval_version()
    assert before - timedelta(seconds=1) <= meta.recorded_at <= datetime.now(UTC)
    assert len(meta.fingerprint) == 64


def test_the_fingerprint_follows_the_requests_not_the_responses(tmp_path: Path) -> None:
    def fingerprint(folder: str, temperature: float | None, text: str) -> str:
        store = CassetteStore(tmp_path / folder)
        record(store, "openai-chat", CASE, [request_for(CASE, temperature=temperature)], answer(text=text))
        meta = store.meta(store.path("openai-chat", SIMPLE, MODEL))
        assert meta is not None
        return meta.fingerprint

    same = fingerprint("a", None, "one answer")
    assert fingerprint("b", None, "another answer") == same
    assert fingerprint("c", 0.5, "one answer") != same


def test_a_failed_episode_writes_nothing(store: CassetteStore) -> None:
    played = record(store, "openai-chat", CASE, [request_for(CASE)], succeeded=False)
    assert played.problems == []
    assert not store.path("openai-chat", SIMPLE, MODEL).exists()


def test_an_unchanged_episode_is_left_as_it_was(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    path = store.path("openai-chat", SIMPLE, MODEL)
    before = path.read_bytes()
    upstream = scripted("openai-chat", answer(text="a different answer"))
    played = asyncio.run(
        play(store, "openai-chat", CASE, Mode.RECORD, [request_for(CASE)], upstream=upstream.transport())
    )
    assert upstream.requests == [], "an unchanged request replays from the recording"
    assert played.problems == [] and path.read_bytes() == before


def test_refresh_sends_every_request_upstream_and_rewrites_the_cassette(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)], answer(text="yesterday"))
    upstream = scripted("openai-chat", answer(text="today"))
    asyncio.run(
        play(
            store,
            "openai-chat",
            CASE,
            Mode.RECORD,
            [request_for(CASE)],
            upstream=upstream.transport(),
            refresh=True,
        )
    )
    assert len(upstream.requests) == 1
    assert replay(store, "openai-chat", CASE, [request_for(CASE)]).results[0].text == "today"


def test_a_changed_episode_is_rerecorded_without_what_it_no_longer_sends(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE), request_for(CASE, max_output_tokens=9)])
    record(store, "openai-chat", CASE, [request_for(CASE, temperature=0.1)], answer(text="new"))
    replayed = replay(store, "openai-chat", CASE, [request_for(CASE, temperature=0.1)])
    assert replayed.problems == []
    assert replayed.results[0].text == "new"


def test_a_recording_from_another_source_is_replaced_not_extended(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)], answer(text="emulated"))
    upstream = scripted("openai-chat", answer(text="from the local model"))
    asyncio.run(
        play(
            store,
            "openai-chat",
            CASE,
            Mode.RECORD,
            [request_for(CASE)],
            upstream=upstream.transport(),
            source="local-model",
        )
    )
    assert len(upstream.requests) == 1, "the emulated answer must not stand in for the local model's"
    meta = store.meta(store.path("openai-chat", SIMPLE, MODEL))
    assert meta is not None and meta.source == "local-model"
    assert replay(store, "openai-chat", CASE, [request_for(CASE)]).results[0].text == "from the local model"


def test_a_save_that_fails_leaves_the_old_cassette_whole(
    store: CassetteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    path = store.path("openai-chat", SIMPLE, MODEL)
    before = path.read_bytes()

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    played = record(store, "openai-chat", CASE, [request_for(CASE, temperature=0.2)])
    assert any("could not save the recording: No space left on device" in p for p in played.problems)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "no temporary file is left behind"


def test_recorded_bodies_are_readable_text_even_when_the_provider_gzips(store: CassetteStore) -> None:
    import gzip

    import httpx2

    from xpeval.adapters.wires import get_wire

    rendered = get_wire("openai-chat").render(answer(text="compressed answer"), model="m", stream=False)
    upstream = httpx2.MockTransport(
        lambda request: httpx2.Response(
            200,
            headers={**rendered.headers, "content-encoding": "gzip"},
            content=gzip.compress(rendered.body),
        )
    )
    played = asyncio.run(
        play(store, "openai-chat", CASE, Mode.RECORD, [request_for(CASE)], upstream=upstream)
    )
    assert played.results[0].text == "compressed answer"
    text = store.path("openai-chat", SIMPLE, MODEL).read_text()
    assert "compressed answer" in text and "!!binary" not in text and "content-encoding" not in text
    assert replay(store, "openai-chat", CASE, [request_for(CASE)]).results[0].text == "compressed answer"


def test_a_retried_episode_saves_only_its_final_attempt(store: CassetteStore) -> None:
    first, second = request_for(CASE), request_for(CASE, temperature=0.3)
    upstream = ScriptedTransport(
        get_wire("openai-chat"),
        [
            Reply(result=answer(text="turn one")),
            Reply.http_error(503, "overloaded"),
            Reply(result=answer(text="turn two")),
        ],
    )

    async def two_attempts() -> list[str]:
        episode = bind_cassette(
            store,
            "openai-chat",
            CASE.id,
            Mode.RECORD,
            source="emulated",
            model="test-model",
            upstream=upstream.transport(),
        )
        settings = AdapterSettings(model="test-model", transport=episode.transport)
        adapter = create_adapter("openai-chat", settings)
        try:
            failed = [await adapter.turn(first), await adapter.turn(second)]
            assert failed[1].error is not None and failed[1].error.retryable
            episode.retry()
            retried = [await adapter.turn(first), await adapter.turn(second)]
            assert [r.text for r in retried] == ["turn one", "turn two"]
        finally:
            await adapter.aclose()
        return episode.finish(succeeded=True)

    assert asyncio.run(two_attempts()) == []
    assert len(upstream.requests) == 3, "the retry replays turn one and asks again for turn two only"
    replayed = replay(store, "openai-chat", CASE, [first, second])
    assert replayed.problems == [], "no interaction of the failed attempt is left in the cassette"
    assert [r.text for r in replayed.results] == ["turn one", "turn two"]
