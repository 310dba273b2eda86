"""Replay: recorded episodes come back exactly, offline, and every mismatch is a named problem."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
import yaml

from tests.cassettes._episodes import (
    MODEL,
    SIMPLE,
    answer,
    builtin_case,
    play,
    record,
    replay,
    request_for,
)
from xpeval.evals.cassettes import CassetteStore, Mode, bind_cassette

CASE = builtin_case(SIMPLE)
COMMAND = f"xpeval run --mode record --adapters openai-chat --cases {SIMPLE} --models openai-chat=test-model"


@pytest.fixture
def store(tmp_path: Path) -> CassetteStore:
    return CassetteStore(tmp_path / "cassettes")


def test_a_recorded_episode_replays_to_the_same_result(store: CassetteStore) -> None:
    recorded = record(store, "openai-chat", CASE, [request_for(CASE)])
    replayed = replay(store, "openai-chat", CASE, [request_for(CASE)])
    assert replayed.problems == []
    assert replayed.results[0].tool_calls == recorded.results[0].tool_calls
    assert replayed.results[0].text == recorded.results[0].text
    assert store.path("openai-chat", SIMPLE, MODEL) == store.root / "openai-chat" / MODEL / f"{SIMPLE}.yaml"


def test_replay_opens_no_socket(store: CassetteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("the network is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    matched = replay(store, "openai-chat", CASE, [request_for(CASE)])
    unmatched = replay(store, "openai-chat", CASE, [request_for(CASE, temperature=0.3)])
    absent = replay(store, "anthropic-messages", CASE, [request_for(CASE)])
    assert matched.problems == [] and unmatched.problems and absent.problems
    assert attempts == []


def test_a_missing_cassette_fails_naming_it_and_the_record_command(store: CassetteStore) -> None:
    played = replay(store, "openai-chat", CASE, [request_for(CASE)])
    assert played.results[0].error is not None
    assert played.episode.has_misses
    [problem] = played.problems
    assert str(store.path("openai-chat", SIMPLE, MODEL)) in problem
    assert COMMAND in problem


def test_a_field_the_adapter_starts_sending_is_drift_with_a_diff(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    played = replay(store, "openai-chat", CASE, [request_for(CASE, temperature=0.3)])
    [problem] = played.problems
    assert "request 1 (POST /v1/chat/completions) matches no recorded interaction" in problem
    assert '+  "temperature": 0.3,' in problem
    assert COMMAND in problem
    assert played.episode.has_misses, "the runner must see a cassette problem, not a provider fault"


def test_a_field_the_adapter_stops_sending_is_drift_not_a_pass(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE, temperature=0.3)])
    played = replay(store, "openai-chat", CASE, [request_for(CASE)])
    [problem] = played.problems
    assert '-  "temperature": 0.3,' in problem


def test_an_interaction_left_unplayed_fails(store: CassetteStore) -> None:
    first, second = request_for(CASE), request_for(CASE, max_output_tokens=64)
    record(store, "openai-chat", CASE, [first, second])
    played = replay(store, "openai-chat", CASE, [first])
    [problem] = played.problems
    assert "recorded interaction 1 (POST /v1/chat/completions) was never requested" in problem
    assert COMMAND in problem


def test_a_request_sent_more_often_than_recorded_is_a_miss(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    played = replay(store, "openai-chat", CASE, [request_for(CASE), request_for(CASE)])
    [problem] = played.problems
    assert "request 2" in problem and "already played" in problem


def test_an_unreadable_cassette_is_a_problem_not_a_crash(store: CassetteStore) -> None:
    path = store.path("openai-chat", SIMPLE, MODEL)
    path.parent.mkdir(parents=True)
    path.write_text("interactions: [ {unclosed")
    played = replay(store, "openai-chat", CASE, [request_for(CASE)])
    [problem] = played.problems
    assert "cannot read the cassette" in problem and COMMAND in problem


def test_an_edited_cassette_is_never_served_from_the_cache(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)], answer(text="first answer"))
    assert replay(store, "openai-chat", CASE, [request_for(CASE)]).results[0].text == "first answer"
    path = store.path("openai-chat", SIMPLE, MODEL)
    path.write_text(path.read_text().replace("first answer", "edited answer, longer"))
    assert replay(store, "openai-chat", CASE, [request_for(CASE)]).results[0].text == "edited answer, longer"


def test_episodes_replay_concurrently_each_from_its_own_cassette(store: CassetteStore) -> None:
    """vcrpy's global patching cannot do this: every episode's transport is its own."""
    adapters = ["openai-chat", "openai-responses", "anthropic-messages", "google-genai", "azure", "moonshot"]
    for index, adapter_id in enumerate(adapters):
        text = f"answer from {adapter_id} #{index}"
        record(store, adapter_id, CASE, [request_for(CASE)], answer(text=text))

    async def all_at_once() -> list[tuple[str, str | None, list[str]]]:
        async def one(adapter_id: str) -> tuple[str, str | None, list[str]]:
            played = await play(store, adapter_id, CASE, Mode.REPLAY, [request_for(CASE)])
            return adapter_id, played.results[0].text, played.problems

        return await asyncio.gather(*(one(a) for a in adapters * 3))

    for index, (adapter_id, replayed_text, problems) in enumerate(asyncio.run(all_at_once())):
        assert problems == [], adapter_id
        assert replayed_text == f"answer from {adapter_id} #{index % len(adapters)}"


def test_live_mode_has_no_cassette(store: CassetteStore) -> None:
    episode = bind_cassette(store, "openai-chat", SIMPLE, Mode.LIVE, source="live", model="m")
    assert episode.transport is None and episode.cassette_path is None
    assert episode.finish() == []
    assert not store.root.exists()


def test_finish_is_idempotent(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    played = replay(store, "openai-chat", CASE, [request_for(CASE, temperature=0.9)])
    assert played.episode.finish() == played.problems != []


def test_metadata_key_is_kept_by_the_yaml_reader_vcrpy_uses(store: CassetteStore) -> None:
    record(store, "openai-chat", CASE, [request_for(CASE)])
    document = yaml.safe_load(store.path("openai-chat", SIMPLE, MODEL).read_text())
    assert set(document) == {"interactions", "metadata", "version"}
    assert document["metadata"]["xpeval"]["case"] == SIMPLE
