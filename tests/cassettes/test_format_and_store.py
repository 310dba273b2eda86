"""Cassette files: our layout, plain vcrpy can replay ours, we can serve other tools'."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest
import vcr

from tests._corpus import corpus_files
from tests.cassettes._episodes import MODEL, SIMPLE, answer, builtin_case, record, request_for
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.registry import create_adapter
from xpeval.evals.cassettes import CassetteError, CassetteStore, Mode, load_cassette, open_episode
from xpeval.evals.cassettes.matching import request_key

CASE = builtin_case(SIMPLE)
CORPUS = corpus_files("cassettes/*/*.yaml")


def test_plain_vcrpy_replays_our_cassette_with_its_standard_matchers(tmp_path: Path) -> None:
    store = CassetteStore(tmp_path)
    record(store, "anthropic-messages", CASE, [request_for(CASE)], answer(text="via plain vcrpy"))

    async def through_vcrpy() -> str | None:
        adapter = create_adapter("anthropic-messages", AdapterSettings(model=MODEL))  # SDK's own transport
        try:
            return (await adapter.turn(request_for(CASE))).text
        finally:
            await adapter.aclose()

    matchers = ["method", "scheme", "host", "port", "path", "query", "body"]
    with vcr.use_cassette(
        str(store.path("anthropic-messages", SIMPLE, MODEL)), record_mode="none", match_on=matchers
    ) as cassette:
        assert asyncio.run(through_vcrpy()) == "via plain vcrpy"
        assert cassette.all_played


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "", " padded"])
def test_ids_that_are_not_one_file_name_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(CassetteError, match="cannot name a cassette file"):
        CassetteStore(tmp_path).path("openai-chat", bad, MODEL)


def test_the_store_lists_adapter_model_case_and_path(tmp_path: Path) -> None:
    store = CassetteStore(tmp_path)
    record(store, "openai-chat", CASE, [request_for(CASE)])
    record(store, "google-genai", CASE, [request_for(CASE)])
    assert list(store.iter_cassettes()) == [
        ("google-genai", MODEL, SIMPLE, store.path("google-genai", SIMPLE, MODEL)),
        ("openai-chat", MODEL, SIMPLE, store.path("openai-chat", SIMPLE, MODEL)),
    ]
    assert store.models("openai-chat") == [MODEL]
    assert list(CassetteStore(tmp_path / "absent").iter_cassettes()) == []


@pytest.mark.parametrize("model", ["meta-llama/Llama-3-8b", "..", ".hidden", "a b:c"])
def test_any_model_name_is_one_folder_read_back_exactly(tmp_path: Path, model: str) -> None:
    store = CassetteStore(tmp_path)
    path = store.path("openai-chat", SIMPLE, model)
    assert path.parent.parent == tmp_path / "openai-chat" and not path.parent.name.startswith(".")
    path.parent.mkdir(parents=True)
    assert store.models("openai-chat") == [model]


def test_malformed_metadata_is_an_error_naming_the_file_and_field(tmp_path: Path) -> None:
    store = CassetteStore(tmp_path)
    record(store, "openai-chat", CASE, [request_for(CASE)])
    path = store.path("openai-chat", SIMPLE, MODEL)
    path.write_text(path.read_text().replace("source: emulated", "source: guessed"))
    with pytest.raises(CassetteError, match=r"metadata\.xpeval\.source"):
        store.meta(path)


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_another_tools_cassette_is_served_in_all_three_body_forms(tmp_path: Path, path: Path) -> None:
    """Each recorded request, sent again, gets its recorded (decompressed) response back."""
    store = CassetteStore(tmp_path)
    target = store.path("foreign", path.stem, "any")
    target.parent.mkdir(parents=True)
    target.symlink_to(path)
    assert store.meta(target) is None, "not recorded by xpeval"
    interactions = load_cassette(path)

    async def resend() -> list[tuple[int, bytes]]:
        episode = open_episode(store, "foreign", path.stem, Mode.REPLAY, source="live", model="any")
        assert episode.transport is not None
        async with httpx2.AsyncClient(transport=episode.transport) as client:
            answers = []
            for interaction in interactions:
                response = await client.request(
                    interaction.method, interaction.uri, content=interaction.request_body or b""
                )
                answers.append((response.status_code, response.content))
        assert episode.finish() == []
        return answers

    assert asyncio.run(resend()) == [(i.status, i.response_body) for i in interactions]


def test_matching_ignores_host_port_key_and_json_layout_but_not_the_rest() -> None:
    key = request_key("POST", "https://a.example/v1/x?alt=sse&key=one", b'{"b": 1, "a": [1, 2]}')
    assert request_key("post", "http://127.0.0.1:9/v1/x?key=two&alt=sse", b'{"a":[1,2],"b":1}') == key
    assert request_key("POST", "https://a.example/v1/x", b'{"a":[1,2],"b":1}') != key
    assert request_key("POST", "https://a.example/v2/x?alt=sse", b'{"a":[1,2],"b":1}') != key
    assert request_key("POST", "https://a.example/v1/x?alt=sse", b'{"a":[1,2]}') != key
    assert request_key("POST", "https://a.example/v1/x?alt=sse", b'{"a":[2,1],"b":1}') != key
