"""Cassette files: our layout, plain vcrpy can replay ours, we can serve other tools'."""

from __future__ import annotations

import asyncio
import gzip
import sys
from pathlib import Path

import httpx2
import pytest
import vcr

from tests._cli import xpeval
from tests._corpus import REPO_ROOT, corpus_files
from tests._hostile import (
    CHAT_ANSWER,
    cassette_alias_bomb,
    cassette_with_gzip_body,
    gzip_of_4_gib_of_zeros,
    gzip_of_zeros,
    sparse_file,
)
from tests.cassettes._episodes import MODEL, SIMPLE, answer, builtin_case, record, request_for
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.registry import create_adapter
from xpeval.evals.cassettes import CassetteError, CassetteStore, Mode, bind_cassette, load_cassette
from xpeval.evals.cassettes.matching import request_key
from xpeval.evals.untrusted import MB, InputLimits, node_bound

CASE = builtin_case(SIMPLE)
CORPUS = corpus_files("cassettes/*/*.yaml")
COMMITTED = CassetteStore(REPO_ROOT / "cassettes")


def test_plain_vcrpy_replays_our_cassette_with_its_standard_matchers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vcrpy 9.4's boto3 stubs no longer build against botocore 1.44 (TypeError: no consistent MRO
    # for VCRHTTPConnection and AWSHTTPConnection) and vcrpy builds them whenever botocore is
    # importable: with boto3 installed (Bedrock) `use_cassette` cannot start at all. Hiding
    # botocore's connection module makes vcrpy skip its boto3 patch, as it does without boto3;
    # the HTTP this test replays is the Anthropic SDK's, which that patch never touches.
    monkeypatch.setitem(sys.modules, "botocore.awsrequest", None)
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
        episode = bind_cassette(store, "foreign", path.stem, Mode.REPLAY, source="live", model="any")
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


# --- hostile cassettes: any pull request can add one ------------------------------------------

HANG = 120.0
"""Seconds after which a command counts as hung (before the fix: 3.4-5.5 GB, or a MemoryError)."""
BOMBS = {
    "alias": cassette_alias_bomb,
    "gzip-4gib": lambda: cassette_with_gzip_body(gzip_of_4_gib_of_zeros()),
    "gzip-64mib-one-member": lambda: cassette_with_gzip_body(gzip_of_zeros(64)),
}
REFUSED = {
    "alias": "cassette refused: its aliases expand it past 100,000 YAML nodes "
    "(raise max_yaml_nodes in [tool.xpeval] if it is genuine)",
    "gzip-4gib": "cassette refused: interaction 0: its gzip bodies decode to more than 32 MB "
    "(raise max_input_mb in [tool.xpeval] if it is genuine)",
    "gzip-64mib-one-member": "cassette refused: interaction 0: its gzip bodies decode to more than 32 MB",
    "200mb": "cassette refused: 200 MB, above the 32 MB cap on an input file "
    "(raise max_input_mb in [tool.xpeval] if it is genuine)",
}


def hostile_cassette(path: Path, kind: str) -> Path:
    if kind == "200mb":
        return sparse_file(path, 200 * MB)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BOMBS[kind](), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", [*BOMBS, "200mb"])
def test_a_hostile_cassette_is_one_line_from_decode(tmp_path: Path, kind: str) -> None:
    path = hostile_cassette(tmp_path / "hostile.yaml", kind)
    assert path.stat().st_size < 8 * MB or kind == "200mb"
    run = xpeval("decode", str(path), timeout=HANG)
    assert run.returncode == 2
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert lines[0].startswith(f"xpeval: {path}: ") and REFUSED[kind] in lines[0]


@pytest.mark.parametrize("kind", ["alias", "gzip-4gib", "200mb"])
def test_a_hostile_cassette_in_a_replay_is_that_episodes_failure_naming_it(tmp_path: Path, kind: str) -> None:
    model = COMMITTED.models("openai-chat")[0]
    cassettes = CassetteStore(tmp_path / "cassettes")
    hostile = hostile_cassette(cassettes.path("openai-chat", SIMPLE, model), kind)
    run = xpeval(
        "run",
        "--no-progress",
        "--adapters",
        "openai-chat",
        "--cases",
        SIMPLE,
        "--cassettes",
        str(cassettes.root),
        "--results",
        str(tmp_path / "results.jsonl"),
        "--reports",
        str(tmp_path / "reports"),
        timeout=HANG,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"FAIL openai-chat / {SIMPLE}: CassetteError: {hostile}: {REFUSED[kind]}" in run.stdout
    assert "gate: FAILED" in run.stdout
    assert f"openai-chat: replay cassettes ({model}: 1 unreadable)" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_gzip_body_within_the_cap_decodes_as_recorded_and_one_past_it_is_refused(tmp_path: Path) -> None:
    answer_bytes = CHAT_ANSWER.replace('"hi"', '"' + "hi " * 100_000 + '"').encode()
    path = tmp_path / "gzipped.yaml"
    path.write_text(cassette_with_gzip_body(gzip.compress(answer_bytes)), encoding="utf-8")
    [interaction] = load_cassette(path)
    assert interaction.response_body == answer_bytes
    assert "content-encoding" not in {k.lower() for k in interaction.response_headers}
    assert path.stat().st_size < len(answer_bytes) // 10
    load_cassette(path, InputLimits(max_bytes=len(answer_bytes)))
    with pytest.raises(CassetteError, match=r"its gzip bodies decode to more than 293\.1 KB"):
        load_cassette(path, InputLimits(max_bytes=len(answer_bytes) - 1))


def test_every_committed_cassette_reads_on_the_fast_path() -> None:
    """No committed cassette has an anchor, so none pays for counting its YAML nodes but the
    one whose JSON bodies hold enough structure characters to reach the budget's bound."""
    slow = []
    for _, _, _, path in COMMITTED.iter_cassettes():
        data = path.read_bytes()
        assert b"&" not in data, path
        if node_bound(data) > InputLimits().max_yaml_nodes:
            slow.append(path)
    assert len(slow) <= 2, slow


def test_a_response_being_recorded_is_decoded_within_the_cap_too() -> None:
    """Recording decodes a gzip body to scrub inside it: a bomb from a provider is refused, not
    inflated; a gzip body within the cap is kept decoded, its header dropped."""
    from xpeval.evals.scrub import Scrubber
    from xpeval.evals.untrusted import InputRefused

    def response(body: bytes) -> dict[str, object]:
        headers = {"Content-Encoding": ["gzip"], "content-length": [str(len(body))]}
        return {"status": {"code": 200}, "headers": headers, "body": {"string": body}}

    kept = Scrubber().response(response(gzip.compress(CHAT_ANSWER.encode())))
    assert kept["body"] == {"string": CHAT_ANSWER.encode()}
    assert kept["headers"] == {"content-length": [str(len(CHAT_ANSWER))]}
    with pytest.raises(InputRefused, match="a response too large to record"):
        Scrubber().response(response(gzip_of_zeros(64)))


_PAIRED = """requests:
- method: POST
  uri: https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse
  body: !!binary eyJhIjogMX0=
  headers: {Content-Type: '**REDACTED**'}
responses:
- status: {code: 200, message: OK}
  headers: {Content-Type: '**REDACTED**'}
  body: {string: !!binary eyJvayI6IHRydWV9}
"""


def test_a_whole_gzip_cassette_of_paired_lists_loads_and_a_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "paired.yaml.gz"
    path.write_bytes(gzip.compress(_PAIRED.encode()))
    (interaction,) = load_cassette(path)
    assert (interaction.request_body, interaction.response_body) == (b'{"a": 1}', b'{"ok": true}')
    assert interaction.response_headers == {"Content-Type": ["**REDACTED**"]}
    bomb = tmp_path / "bomb.yaml.gz"
    bomb.write_bytes(gzip.compress(_PAIRED.encode() + b"#" * MB))
    with pytest.raises(CassetteError, match="cassette refused"):
        load_cassette(bomb, InputLimits(max_bytes=MB // 2))
    broken = tmp_path / "broken.yaml.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(CassetteError, match="not a gzip file"):
        load_cassette(broken)
