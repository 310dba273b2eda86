"""What the replay's shortcuts must never change: the document a cassette reads as, which
recorded interaction answers a request, and the tools each turn sends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest
import yaml
from vcr.record_mode import RecordMode
from vcr.request import Request as VcrRequest

from tests._corpus import REPO_ROOT
from tests.cassettes._episodes import MODEL, SIMPLE, builtin_case, request_for
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ToolSpec, TurnResult, UserMessage
from xpeval.adapters.registry import create_adapter
from xpeval.adapters.wires import get_wire
from xpeval.evals.cassettes.cassette import IndexedCassette, recording_from_document
from xpeval.evals.cassettes.format import _Loader as CassetteLoader
from xpeval.evals.cassettes.format import read_document
from xpeval.evals.scrub import Scrubber

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DOCUMENTS = {
    "strings, lists, mappings": "a: [x, {b: c}]\nd: 'quoted: text'\n",
    "numbers, null, booleans": "status: {code: 200}\nn: ~\nt: true\nf: 1.5\n",
    "binary": "body: !!binary aGVsbG8=\n",
    "aliases": "a: &shared {k: [v]}\nb: *shared\n",
    "merge keys": "base: &b {k: 1}\nm: {<<: *b, j: 2}\n",
    "non-string keys": "{1: one, null: none, b: [x]}\n",
    "tagged collections": "- !!set {a: null}\n- !!str 5\n- !!omap [{a: 1}]\n",
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_cassette_reads_as_pyyamls_safe_loader_reads_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(DOCUMENTS[name], encoding="utf-8")
    assert read_document(path) == yaml.load(DOCUMENTS[name], Loader=SAFE)


def test_an_alias_that_holds_itself_is_built_as_the_safe_loader_builds_it() -> None:
    # Refused before it is built when read from a file (`count_nodes`); the loader itself must
    # still not recurse forever if that guard ever changes.
    document = yaml.load("&a [*a]\n", Loader=CassetteLoader)
    assert document[0] is document


def test_every_committed_cassette_reads_as_the_safe_loader_reads_it() -> None:
    paths = sorted((REPO_ROOT / "cassettes").rglob("*.yaml"))[::20]
    assert paths, "the repository commits cassettes"
    for path in paths:
        assert read_document(path) == yaml.load(path.read_bytes(), Loader=SAFE), path


URI = "https://api.openai.com/v1/chat/completions"
SECRET = "placeholder-secret-replay-abcdefghijklmn"


def cassette_of(body: str) -> IndexedCassette:
    request = {"method": "POST", "uri": URI, "body": body, "headers": {}}
    response = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}}
    recording = recording_from_document({"interactions": [{"request": request, "response": response}]}, "c")
    return IndexedCassette(
        Path("c.yaml"), record_mode=RecordMode.NONE, scrubber=Scrubber([SECRET]), recording=recording
    )


def test_a_request_as_recorded_in_another_layout_or_with_the_secret_matches_and_a_changed_one_does_not() -> (
    None
):
    cassette = cassette_of('{"b":1,"a":"<scrubbed>"}')
    assert VcrRequest("POST", URI, b'{"b":1,"a":"<scrubbed>"}', {}) in cassette
    assert (
        VcrRequest("POST", "http://127.0.0.1:9/v1/chat/completions", b'{"a": "<scrubbed>", "b": 1}', {})
        in cassette
    )
    assert VcrRequest("POST", URI, json.dumps({"b": 1, "a": SECRET}).encode(), {}) in cassette
    assert VcrRequest("POST", URI, b'{"b":2,"a":"<scrubbed>"}', {}) not in cassette
    assert VcrRequest("GET", URI, b'{"b":1,"a":"<scrubbed>"}', {}) not in cassette


def test_each_turn_sends_its_own_tools_when_they_change_between_turns() -> None:
    sent: list[list[str]] = []
    reply = get_wire("openai-chat").render(TurnResult(text="ok"), model=MODEL, stream=False)

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append([tool["function"]["name"] for tool in json.loads(request.content)["tools"]])
        return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)

    adapter = create_adapter("openai-chat", AdapterSettings(transport=httpx2.MockTransport(answer)))
    first = request_for(builtin_case(SIMPLE))
    other = [
        ToolSpec(name="other_tool", parameters={"type": "object", "properties": {"x": {"type": "string"}}})
    ]
    second = first.model_copy(update={"tools": other, "messages": [UserMessage(content="again")]})

    async def turns() -> None:
        for request in (first, second, first):
            assert (await adapter.turn(request)).error is None

    asyncio.run(turns())
    assert sent[1] == ["other_tool"]
    assert sent[0] == sent[2] == [tool.name for tool in first.tools]
