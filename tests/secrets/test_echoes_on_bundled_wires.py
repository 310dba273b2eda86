"""A key the provider echoes, on the three bundled wires, through the real CLI against a loopback
server: no piece of it (6 characters or more) reaches a cassette, the results, the history's
Parquet, stdout or stderr — not across AWS eventstream frames (a cassette that still replays),
not in an error text cut before it was scrubbed (Mistral's validation errors, the body head a
decode error shows), not in Cohere's error message (no response header in it) or in what its
SDK logs on the root logger."""

from __future__ import annotations

import json
import random
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests._cli import xpeval
from xpeval.adapters.wires import RenderedResponse
from xpeval.evals.emulator import EmulatorServer, Reply

KEY = "".join(random.SystemRandom().choices(string.ascii_letters, k=26))
"""A key made up per session, of letters only: no 6-character piece of it turns up by chance in a
hex digest or a timestamp."""
SHORTEST = 6
KEY_VARIABLES = {
    "mistral": ("MISTRAL_API_KEY", "MISTRAL_BASE_URL"),
    "cohere": ("CO_API_KEY", "CO_API_URL"),
    "bedrock-converse": ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"),
}
Done = subprocess.CompletedProcess[str]
Row = dict[str, Any]
EVENTSTREAM = {"content-type": "application/vnd.amazon.eventstream"}


def pieces(key: str = KEY) -> set[str]:
    return {key[i : i + SHORTEST] for i in range(len(key) - SHORTEST + 1)}


def leaks(texts: dict[str, str]) -> dict[str, list[str]]:
    found = {where: sorted(p for p in pieces() if p in text) for where, text in texts.items()}
    return {where: hits for where, hits in found.items() if hits}


def written(folder: Path) -> dict[str, str]:
    """Every file under `folder` as text; a Parquet file as its rows."""
    texts = {}
    for path in folder.rglob("*"):
        if path.suffix == ".parquet":
            texts[str(path)] = json.dumps(pq.read_table(path).to_pylist(), default=str)
        elif path.is_file():
            texts[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return texts


@pytest.fixture
def provider() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def run(
    provider: EmulatorServer, tmp_path: Path, adapter: str, mode: str, *extra: str, name: str = "results"
) -> tuple[Done, list[Row]]:
    key_variable, url_variable = KEY_VARIABLES[adapter]
    results = tmp_path / "out" / f"{name}.jsonl"
    ran = xpeval(
        "run", "--mode", mode, "--adapters", adapter, "--cases", "calc_simple_01", "--retries", "0",
        "--no-progress", "--cassettes", str(tmp_path / "out" / "cassettes"),
        "--results", str(results), "--reports", str(tmp_path / "out" / "reports"), *extra,
        env={key_variable: KEY, url_variable: provider.url},
    )  # fmt: skip
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    return ran, [row for row in rows if "case_id" in row]


def everything(tmp_path: Path, *runs: Done) -> dict[str, str]:
    history = xpeval(
        "history",
        "--append",
        str(tmp_path / "out" / "results.jsonl"),
        "--store",
        str(tmp_path / "out" / "history"),
    )
    texts = written(tmp_path / "out")
    for number, ran in enumerate([*runs, history]):
        texts[f"stdout {number}"], texts[f"stderr {number}"] = ran.stdout, ran.stderr
    return texts


def bedrock_echo() -> list[bytes]:
    """A stream echoing the key split across two text frames, and whole inside one call's input."""
    from xpeval.bundled.bedrock_converse import _frame

    arguments = {"value": 26.2, "from_unit": "mi", "to_unit": "km", "note": f"key {KEY} ok"}
    use = {"toolUse": {"toolUseId": "tooluse_1", "name": "convert_units"}}
    return [
        _frame("messageStart", {"role": "assistant"}),
        _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": f"Your key is {KEY[:13]}"}}),
        _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": f"{KEY[13:]}, right?"}}),
        _frame("contentBlockStop", {"contentBlockIndex": 0}),
        _frame("contentBlockStart", {"contentBlockIndex": 1, "start": use}),
        _frame(
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": json.dumps(arguments)}}},
        ),
        _frame("contentBlockStop", {"contentBlockIndex": 1}),
        _frame("messageStop", {"stopReason": "tool_use"}),
        _frame("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}, "metrics": {}}),
    ]


@pytest.mark.slow
def test_a_key_echoed_across_and_inside_eventstream_frames_is_scrubbed_and_the_cassette_replays(
    provider: EmulatorServer, tmp_path: Path
) -> None:
    provider.script([Reply(raw=RenderedResponse(200, EVENTSTREAM, bedrock_echo()))] * 2, name="default")
    record, recorded = run(
        provider, tmp_path, "bedrock-converse", "record", "--target", "provider", "--stream", "always"
    )
    assert [row["error_kind"] for row in recorded] == [None], record.stdout + record.stderr
    replay, replayed = run(
        provider, tmp_path, "bedrock-converse", "replay", "--stream", "always", name="replayed"
    )
    [row] = [r for r in replayed if r["source"] == "cassette"]
    assert row["error_kind"] is None, replay.stdout + replay.stderr
    assert row["text"] == "Your key is <scrubbed>, right?"
    assert [call["arguments"]["note"] for call in row["calls"]] == ["key <scrubbed> ok"]
    assert leaks(everything(tmp_path, record, replay)) == {}


COOKIE = "".join(random.SystemRandom().choices(string.ascii_letters, k=20))
"""A session cookie the provider sets: a response header, never part of an error message."""


def raw(status: int, content_type: str, *chunks: bytes, **headers: str) -> Reply:
    return Reply(raw=RenderedResponse(status, {"content-type": content_type, **headers}, list(chunks)))


def sse(*events: tuple[str, str]) -> list[bytes]:
    return [f"event: {name}\ndata: {data}\n\n".encode() for name, data in events]


MISTRAL_INVALID = json.dumps(
    {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "m",
        "created": f"id {KEY} is no number at all, as pydantic will say",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()
COHERE_CORRUPT_FRAME = sse(
    (
        "message-start",
        json.dumps({"type": "message-start", "id": "x", "delta": {"message": {"role": "assistant"}}}),
    ),
    ("content-delta", "{not json " + "x" * 80 + KEY + " and more"),
    ("message-end", json.dumps({"type": "message-end", "delta": {"finish_reason": "COMPLETE"}})),
)
ERROR_TEXTS = {
    "mistral validation error": ("mistral", "never", raw(200, "application/json", MISTRAL_INVALID)),
    "bedrock html 200": (
        "bedrock-converse",
        "never",
        raw(
            200,
            "text/html",
            f"<html><head><title>Gateway</title></head><body>key={KEY}</body></html>".encode(),
        ),
    ),
    "cohere 500 with a cookie": (
        "cohere",
        "never",
        raw(
            500,
            "text/plain",
            b"",
            **{"set-cookie": f"session={COOKIE}"},
        ),
    ),
    "cohere corrupt frame": ("cohere", "always", raw(200, "text/event-stream", *COHERE_CORRUPT_FRAME)),
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(ERROR_TEXTS))
def test_an_echoed_key_reaches_no_file_and_no_line_however_its_error_text_is_cut(
    provider: EmulatorServer, tmp_path: Path, fault: str
) -> None:
    adapter, stream, reply = ERROR_TEXTS[fault]
    provider.script([reply] * 2, name="default")
    ran, rows = run(provider, tmp_path, adapter, "record", "--target", "provider", "--stream", stream)
    assert len(rows) == 1, ran.stdout + ran.stderr
    texts = everything(tmp_path, ran)
    assert {where.rpartition("/")[2]: hits for where, hits in leaks(texts).items()} == {}
    assert [where for where, text in texts.items() if COOKIE in text] == []
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
