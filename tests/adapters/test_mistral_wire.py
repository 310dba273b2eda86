"""Mistral's chat wire (`mistral-chat`, xpeval/bundled/mistral_chat.py), shipped with xpeval but
written against `xpeval.plugin` only: every real recording in ../shared/corpus/new-wires/mistral-chat
decodes exactly (calls with their ids and arguments, text, finish reason), read back here by a
reader of the raw bodies of its own; its requests are told from OpenAI Chat's by Mistral's host;
its name rules judge what it sends."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT, corpus_files
from xpeval.adapters.registry import effective_contract, get_entry
from xpeval.adapters.wires import get_wire, wire_for_path
from xpeval.evals.acceptance.checker import check, mode_for
from xpeval.evals.cassettes import load_cassette

CORPUS = corpus_files("new-wires/mistral-chat/*")
MODULE = REPO_ROOT / "xpeval" / "bundled" / "mistral_chat.py"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        p.get("text") or "" for p in content or [] if isinstance(p, dict) and p.get("type") == "text"
    )


def _call(raw: dict[str, Any]) -> dict[str, Any]:
    arguments = raw["function"]["arguments"]
    return {
        "id": raw.get("id"),
        "name": raw["function"]["name"],
        "arguments": json.loads(arguments) if isinstance(arguments, str) else arguments,
    }


def expected(body: bytes) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """(calls, text, finish reason) straight from a recorded body: a completion, or its SSE chunks."""
    text = body.decode("utf-8")
    if text.lstrip().startswith("{"):
        choice = json.loads(text)["choices"][0]
        message = choice["message"]
        calls = [_call(c) for c in message.get("tool_calls") or []]
        return calls, _text_of(message.get("content")) or None, choice.get("finish_reason")
    pieces: list[str] = []
    calls = []
    finish = None
    for line in text.splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        choice = json.loads(line[5:])["choices"][0]
        pieces.append(_text_of(choice["delta"].get("content")))
        calls.extend(_call(c) for c in choice["delta"].get("tool_calls") or [])
        finish = choice.get("finish_reason") or finish
    return calls, "".join(pieces) or None, finish


@pytest.mark.skipif(
    not CORPUS, reason="the shared corpus (../shared/corpus next to the repository) is absent"
)
def test_every_mistral_recording_decodes_exactly(cli: Cli) -> None:
    interactions = 0
    for path in CORPUS:
        done = cli("decode", str(path), "--wire", "mistral-chat", "--json")
        assert done.returncode == 0, (path.name, done.stderr)
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        recorded = load_cassette(path)
        assert len(rows) == len(recorded), path.name
        for row, interaction in zip(rows, recorded, strict=True):
            calls, text, finish = expected(interaction.response_body)
            assert (row["tool_calls"], row["text"], row["finish_reason"]) == (calls, text, finish), path.name
            assert row["status"] == interaction.status == 200 and "decode_error" not in row
            interactions += 1
    assert interactions == 15  # PROVENANCE.md: 13 files, 15 interactions


@pytest.mark.skipif(
    not CORPUS, reason="the shared corpus (../shared/corpus next to the repository) is absent"
)
def test_a_mistral_recording_is_told_by_its_host(cli: Cli) -> None:
    (path,) = [p for p in CORPUS if p.name.startswith("chatlas__")]
    done = cli("decode", str(path), "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["text"] == "2", done.stderr


def test_mistral_s_host_picks_its_wire_and_any_other_host_openai_chat() -> None:
    assert wire_for_path("https://api.mistral.ai/v1/chat/completions") is get_wire("mistral-chat")
    assert wire_for_path("https://api.mistral.ai/v1/chat/completions#stream") is get_wire("mistral-chat")
    assert wire_for_path("https://api.groq.com/openai/v1/chat/completions") is get_wire("openai-chat")
    assert wire_for_path("/v1/chat/completions") is get_wire("openai-chat")


def test_mistral_is_a_built_in_direct_adapter_judged_by_its_own_rules() -> None:
    contract = effective_contract("mistral")
    assert (contract.wire, contract.schema_dialect, get_entry("mistral").kind) == (
        "mistral-chat",
        "mistral",
        "direct",
    )
    mode = mode_for("mistral-chat", "mistral", None)
    assert mode == "mistral-chat"
    sent = {"type": "function", "function": {"name": "web.search", "parameters": {"type": "object"}}}
    assert [v.rule for v in check(mode, sent)] == ["mistral.name-pattern"]


def test_the_mistral_wire_imports_nothing_but_the_plugin_api_and_its_sdk() -> None:
    tree = ast.parse(Path(MODULE).read_text())
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert {m for m in imported if m and m.startswith("xpeval")} == {"xpeval.plugin"}
    assert {m.split(".")[0] for m in imported if m} <= {
        "xpeval",
        "mistralai",
        "__future__",
        "hashlib",
        "json",
        "re",
        "dataclasses",
        "typing",
    }
