"""Cohere's v2 chat wire (`cohere-chat`, xpeval/bundled/cohere_chat.py), shipped with xpeval but
written against `xpeval.plugin` only: every real recording in ../shared/corpus/new-wires/cohere-chat
decodes exactly (calls with their ids and arguments, text, finish reason, the error of a stream
that ended in `ERROR`), read back here by a reader of the raw bodies of its own; the SDK's httpx
requests go through xpeval's transport."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT, corpus_files
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.wires import get_wire, wire_for_path
from xpeval.evals.acceptance.checker import mode_for
from xpeval.evals.cassettes import load_cassette

CORPUS = corpus_files("new-wires/cohere-chat/*")
MODULE = REPO_ROOT / "xpeval" / "bundled" / "cohere_chat.py"


def _text(parts: Any) -> str:
    items = parts if isinstance(parts, list) else [parts]
    return "".join(
        p.get("text", "") for p in items if isinstance(p, dict) and p.get("type", "text") == "text"
    )


def _plain(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None, str | None, str | None]:
    message = body["message"]
    calls = [
        {"id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
        for c in message.get("tool_calls") or []
    ]
    return calls, _text(message.get("content") or []) or None, body["finish_reason"], None


def _streamed(text: str) -> tuple[list[dict[str, Any]], str | None, str | None, str | None]:
    pieces: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = error_type = None
    for line in text.splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        event = json.loads(line[5:])
        message = (event.get("delta") or {}).get("message") or {}
        if event["type"] in ("content-start", "content-delta"):
            pieces.append(_text(message["content"]))
        elif event["type"] in ("tool-call-start", "tool-call-delta"):
            call = calls.setdefault(event["index"], {"id": None, "name": "", "arguments": ""})
            raw = message["tool_calls"]
            call["id"] = call["id"] or raw.get("id")
            call["name"] = call["name"] or raw.get("function", {}).get("name", "")
            call["arguments"] += raw["function"].get("arguments", "")
        elif event["type"] == "message-end":
            finish, error_type = event["delta"]["finish_reason"], event["delta"].get("error_type")
    decoded = [{**c, "arguments": json.loads(c["arguments"])} for c in calls.values()]
    return decoded, "".join(pieces) or None, finish, error_type


def expected(body: bytes) -> tuple[list[dict[str, Any]], str | None, str | None, str | None]:
    """(calls, text, finish reason, error type) straight from a recorded body."""
    text = body.decode("utf-8")
    return _plain(json.loads(text)) if text.lstrip().startswith("{") else _streamed(text)


@pytest.mark.skipif(
    not CORPUS, reason="the shared corpus (../shared/corpus next to the repository) is absent"
)
def test_every_cohere_recording_decodes_exactly(cli: Cli) -> None:
    interactions = errors = 0
    for path in CORPUS:
        done = cli("decode", str(path), "--wire", "cohere-chat", "--json")
        assert done.returncode == 0, (path.name, done.stderr)
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        recorded = load_cassette(path)
        assert len(rows) == len(recorded), path.name
        for row, interaction in zip(rows, recorded, strict=True):
            calls, text, finish, error_type = expected(interaction.response_body)
            got = (row["tool_calls"], row["text"], row["finish_reason"], row["error_type"])
            assert got == (calls, text, finish, error_type), path.name
            assert row["status"] == interaction.status == 200 and "decode_error" not in row
            interactions += 1
            errors += error_type is not None
    assert (interactions, errors) == (15, 2)  # PROVENANCE.md: 11 files, 15 interactions


def test_cohere_is_a_built_in_direct_adapter_on_its_own_path() -> None:
    contract = effective_contract("cohere")
    assert (contract.wire, contract.schema_dialect) == ("cohere-chat", "cohere")
    assert wire_for_path("https://api.cohere.com/v2/chat") is get_wire("cohere-chat")
    assert mode_for("cohere-chat", "cohere", None) == "cohere-chat"


def test_the_cohere_wire_imports_nothing_of_xpeval_but_the_plugin_api() -> None:
    tree = ast.parse(Path(MODULE).read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert {m for m in imported if m and m.startswith("xpeval")} == {"xpeval.plugin"}
