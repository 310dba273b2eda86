"""AWS Bedrock Converse (`bedrock-converse`, xpeval/bundled/bedrock_converse.py), shipped with
xpeval but written against `xpeval.plugin` only: every real recording in
../shared/corpus/new-wires/bedrock-converse decodes exactly (calls with their ids and arguments,
text, stop reason, the HTTP errors and their types), read back here by a reader of the raw bodies
of its own (the eventstream frames parsed by hand, as PROVENANCE.md there describes them); boto3's
requests go through xpeval's transport."""

from __future__ import annotations

import ast
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT, corpus_files
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.wires import get_wire, wire_for_path
from xpeval.evals.acceptance.checker import mode_for
from xpeval.evals.cassettes import load_cassette

CORPUS = corpus_files("new-wires/bedrock-converse/*")
MODULE = REPO_ROOT / "xpeval" / "bundled" / "bedrock_converse.py"
Expected = tuple[list[dict[str, Any]], str | None, str | None, str | None]


def frames(body: bytes) -> list[tuple[dict[str, str], Any]]:
    """(headers, payload) of each eventstream message, both CRCs checked."""
    out = []
    offset = 0
    while offset < len(body):
        total, head_length = struct.unpack(">II", body[offset : offset + 8])
        message = body[offset : offset + total]
        assert struct.unpack(">I", message[8:12])[0] == zlib.crc32(message[:8])
        assert struct.unpack(">I", message[-4:])[0] == zlib.crc32(message[:-4])
        headers: dict[str, str] = {}
        at = 12
        while at < 12 + head_length:
            size = message[at]
            name = message[at + 1 : at + 1 + size].decode()
            kind = message[at + 1 + size]
            assert kind == 7, "only string headers are recorded"
            (length,) = struct.unpack(">H", message[at + 2 + size : at + 4 + size])
            headers[name] = message[at + 4 + size : at + 4 + size + length].decode()
            at += 4 + size + length
        out.append((headers, json.loads(message[12 + head_length : -4])))
        offset += total
    return out


def _streamed(body: bytes) -> Expected:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    stop = None
    for headers, payload in frames(body):
        assert headers[":message-type"] == "event"
        event = headers[":event-type"]
        index = payload.get("contentBlockIndex")
        if event == "contentBlockStart" and "toolUse" in payload["start"]:
            use = payload["start"]["toolUse"]
            if use.get("type") != "server_tool_use":
                calls[index] = {"id": use["toolUseId"], "name": use["name"], "arguments": ""}
        elif event == "contentBlockDelta":
            delta = payload["delta"]
            text.append(delta.get("text", ""))
            if "toolUse" in delta and index in calls:
                calls[index]["arguments"] += delta["toolUse"]["input"]
        elif event == "messageStop":
            stop = payload["stopReason"]
    decoded = [{**c, "arguments": json.loads(c["arguments"] or "{}")} for c in calls.values()]
    return decoded, "".join(text) or None, stop, None


def _plain(body: dict[str, Any]) -> Expected:
    content = body["output"]["message"]["content"]
    calls = [
        {"id": b["toolUse"]["toolUseId"], "name": b["toolUse"]["name"], "arguments": b["toolUse"]["input"]}
        for b in content
        if "toolUse" in b and b["toolUse"].get("type") != "server_tool_use"
    ]
    return calls, "".join(b.get("text", "") for b in content) or None, body["stopReason"], None


def expected(status: int, headers: dict[str, list[str]], body: bytes) -> Expected:
    """(calls, text, stop reason, error type) straight from a recorded response."""
    if status != 200:
        named = next((v[0] for k, v in headers.items() if k.lower() == "x-amzn-errortype"), None)
        assert "message" in json.loads(body)
        return [], None, None, named.split(":")[0] if named else None
    if body.lstrip().startswith(b"{"):
        return _plain(json.loads(body))
    return _streamed(body)


@pytest.mark.skipif(
    not CORPUS, reason="the shared corpus (../shared/corpus next to the repository) is absent"
)
def test_every_bedrock_recording_decodes_exactly(cli: Cli) -> None:
    interactions = errors = streamed = with_calls = 0
    for path in CORPUS:
        done = cli("decode", str(path), "--wire", "bedrock-converse", "--json")
        assert done.returncode == 0, (path.name, done.stderr)
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        recorded = load_cassette(path)
        assert len(rows) == len(recorded), path.name
        for row, interaction in zip(rows, recorded, strict=True):
            calls, text, stop, error_type = expected(
                interaction.status, interaction.response_headers, interaction.response_body
            )
            got = (row["tool_calls"], row["text"], row["finish_reason"], row["error_type"])
            assert got == (calls, text, stop, error_type), path.name
            assert row["status"] == interaction.status and "decode_error" not in row, path.name
            interactions += 1
            errors += interaction.status != 200
            streamed += interaction.uri.split("?")[0].endswith("/converse-stream")
            with_calls += bool(calls)
    # PROVENANCE.md: 19 files, 25 interactions (12 with tool calls, 11 streamed, 3 HTTP errors)
    assert (len(CORPUS), interactions, with_calls, streamed, errors) == (19, 25, 12, 11, 3)


def test_bedrock_is_a_built_in_direct_adapter_on_its_own_path() -> None:
    contract = effective_contract("bedrock-converse")
    assert (contract.wire, contract.schema_dialect) == ("bedrock-converse", "bedrock")
    url = "https://bedrock-runtime.eu-west-1.amazonaws.com/model/us.anthropic.claude-3%3A0/converse-stream"
    wire = get_wire("bedrock-converse")
    assert wire_for_path(url) is wire
    assert wire.is_stream(url, None) and wire.recorded_model(url, None) == "us.anthropic.claude-3:0"
    assert mode_for("bedrock-converse", "bedrock", None) == "bedrock-converse"


def test_the_emulator_renders_eventstream_frames_that_this_reader_and_botocore_read() -> None:
    from xpeval.adapters.contract import ToolCall, TurnResult

    result = TurnResult(
        text="hello",
        tool_calls=[ToolCall(id="tooluse_1", name="get", arguments={"a": 1}, raw_arguments='{"a": 1}')],
        finish_reason="tool_calls",
        raw_finish_reason="tool_use",
    )
    body = get_wire("bedrock-converse").render(result, model="m", stream=True).body
    assert expected(200, {}, body) == (
        [{"id": "tooluse_1", "name": "get", "arguments": {"a": 1}}],
        "hello",
        "tool_use",
        None,
    )


def _xpeval_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    return {m for m in imported if m and m.startswith("xpeval")}


def test_the_bedrock_wire_imports_nothing_of_xpeval_but_the_plugin_api() -> None:
    # Its reasoning-state rules are a module of their own, written against the plugin API too.
    reasoning = Path(MODULE).with_name("bedrock_reasoning.py")
    assert _xpeval_imports(Path(MODULE)) == {"xpeval.plugin", "xpeval.bundled.bedrock_reasoning"}
    assert _xpeval_imports(reasoning) == {"xpeval.plugin"}


def test_clients_signed_with_placeholder_keys_read_botocores_models_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `cassettes check` and the conformance suite build one adapter per cassette: each client
    # parsing botocore's JSON models again was 0.12 s of CPU a cassette.
    import asyncio

    from botocore.loaders import JSONFileLoader

    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    loaded: list[str] = []
    real = JSONFileLoader.load_file

    def counted(self: JSONFileLoader, file_path: str) -> Any:
        loaded.append(file_path)
        return real(self, file_path)

    monkeypatch.setattr(JSONFileLoader, "load_file", counted)
    adapters = [create_adapter("bedrock-converse", AdapterSettings()) for _ in range(3)]
    after_first = len(loaded)
    adapters += [create_adapter("bedrock-converse", AdapterSettings(base_url="http://127.0.0.1:1"))]
    assert len(loaded) == after_first, loaded[after_first:]
    for adapter in adapters:
        asyncio.run(adapter.aclose())
