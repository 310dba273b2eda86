"""The three bundled wires (Bedrock Converse, Cohere v2 chat, Mistral chat) through
`xpeval run` against a loopback server and from cassettes: a stream frame the wire cannot decode
makes the episode a `decode` error, live and in replay, never an answer scored correct; a Bedrock
plain answer whose `toolUse.input` is not an object is a malformed call, never `{}`; a cited
passage (`citationsContent`) keeps its text; an in-stream throttling error is retried."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests._cli import Cli, Ran
from tests._corpus import corpus_files
from tests.adapters._bundled_faults import (
    ANSWER,
    BROKEN_FRAMES,
    BUNDLED,
    CASE,
    UNKNOWN_EVENT,
    AnswerReply,
    BrokenFrameReply,
    RechunkedReply,
    StreamErrorReply,
    bedrock_plain_answer,
    loopback_environment,
)
from xpeval.evals.emulator import EmulatorServer, Reply

CITATIONS = corpus_files("new-wires/bedrock-converse/langchain-aws__*citations*")


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as running:
        yield running


def run(
    cli: Cli, tmp_path: Path, adapters: tuple[str, ...], *options: str, env: dict[str, str] | None = None
) -> tuple[Ran, list[dict[str, Any]]]:
    """`xpeval run` of one case through `adapters`: what it did, and every row it wrote."""
    results = tmp_path / "results.jsonl"
    results.unlink(missing_ok=True)
    ran = cli(
        "run",
        "--adapters",
        ",".join(adapters),
        "--cases",
        CASE,
        "--no-progress",
        "--no-baseline",
        "--results",
        str(results),
        "--reports",
        str(tmp_path / "reports"),
        *options,
        env=env,
    )
    lines = results.read_text().splitlines() if results.exists() else []
    return ran, [row for row in map(json.loads, lines) if row.get("type") == "result"]


def live(
    cli: Cli, tmp_path: Path, url: str, adapters: tuple[str, ...], *options: str
) -> tuple[Ran, list[dict[str, Any]]]:
    return run(
        cli,
        tmp_path,
        adapters,
        "--mode",
        "live",
        "--target",
        "provider",
        *options,
        env=loopback_environment(url),
    )


def test_a_stream_frame_the_wire_cannot_decode_is_a_decode_error_live_on_every_bundled_wire(
    cli: Cli, server: EmulatorServer, tmp_path: Path
) -> None:
    server.script([BrokenFrameReply()] * 3, name="default")
    ran, rows = live(cli, tmp_path, server.url, BUNDLED, "--stream", "always", "--retries", "0")
    assert {(row["adapter"], row["error_kind"]) for row in rows} == {(a, "decode") for a in BUNDLED}, rows
    assert not any(row["correct"] for row in rows)
    assert ran.returncode == 1, ran.stdout + ran.stderr


@pytest.mark.parametrize(
    ("adapter", "frame", "named"),
    [
        ("bedrock-converse", UNKNOWN_EVENT, "surpriseEvent"),
        ("cohere", b'event: surprise-event\ndata: {"type": "surprise-event"}\n\n', "stream event 2"),
    ],
    ids=["bedrock", "cohere"],
)
def test_an_event_type_the_wire_does_not_have_is_a_decode_error_not_a_skipped_event(
    cli: Cli, server: EmulatorServer, tmp_path: Path, adapter: str, frame: bytes, named: str
) -> None:
    server.script([BrokenFrameReply(frame=frame)], name="default")
    ran, rows = live(cli, tmp_path, server.url, (adapter,), "--stream", "always", "--retries", "0")
    assert [(row["error_kind"], row["correct"]) for row in rows] == [("decode", False)], rows
    assert named in rows[0]["error_message"]
    assert ran.returncode == 1


def _with_broken_frame(adapter: str, body: Any) -> Any:
    """A recorded stream's body with one frame its wire cannot decode, after its first frame."""
    if adapter == "bedrock-converse":
        first = int.from_bytes(body[:4], "big")
        return body[:first] + UNKNOWN_EVENT + body[first:]
    first = body.index("\n\n") + 2
    broken = BROKEN_FRAMES["cohere-chat" if adapter == "cohere" else "mistral-chat"].decode()
    return body[:first] + broken + body[first:]


def test_a_recorded_stream_frame_the_wire_cannot_decode_fails_the_replay_on_every_bundled_wire(
    cli: Cli, tmp_path: Path
) -> None:
    cassettes = tmp_path / "cassettes"
    recorded, _ = run(
        cli,
        tmp_path,
        BUNDLED,
        "--mode",
        "record",
        "--target",
        "emulator",
        "--stream",
        "always",
        "--cassettes",
        str(cassettes),
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    files = sorted(cassettes.rglob(f"{CASE}.yaml"))
    assert len(files) == len(BUNDLED)
    for path in files:
        document = yaml.safe_load(path.read_text())
        body = document["interactions"][0]["response"]["body"]
        body["string"] = _with_broken_frame(path.relative_to(cassettes).parts[0], body["string"])
        path.write_text(yaml.safe_dump(document))
    ran, rows = run(
        cli, tmp_path, BUNDLED, "--mode", "replay", "--stream", "always", "--cassettes", str(cassettes)
    )
    assert {(row["adapter"], row["error_kind"]) for row in rows} == {(a, "cassette") for a in BUNDLED}, rows
    assert all("no longer decodes (decode: 200" in row["error_message"] for row in rows), rows
    assert not any(row["correct"] for row in rows)
    assert ran.returncode != 0


@pytest.mark.parametrize(
    "tool_input",
    [
        '{"value": 26.2, "from_unit": "mi"',
        [26.2, "mi", "km"],
        '{"value": 26.2, "from_unit": "mi", "to_unit": "km"}',
    ],
    ids=["broken-json-string", "list", "object-as-a-string"],
)
def test_a_bedrock_plain_tool_input_that_is_not_an_object_is_a_malformed_call_never_empty_arguments(
    cli: Cli, server: EmulatorServer, tmp_path: Path, tool_input: object
) -> None:
    server.script([bedrock_plain_answer(tool_input)], name="default")
    _, rows = live(cli, tmp_path, server.url, ("bedrock-converse",), "--stream", "never", "--retries", "0")
    (row,) = rows
    assert row["malformed"] and not row["correct"], row
    (call,) = row["calls"]
    assert call["name"] == "convert_units" and call["parse_error"], call


def _cited_answer() -> Reply:
    """A plain answer as Bedrock sends a cited passage: a text block, then a `citationsContent`
    block whose `content` holds the cited text beside the `citations` saying where it came from."""
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"text": "The handbook says staff should "},
                    {
                        "citationsContent": {
                            "citations": [
                                {
                                    "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 31}},
                                    "sourceContent": [{"text": "Ask your team lead before travel."}],
                                    "title": "handbook",
                                }
                            ],
                            "content": [{"text": "ask their team lead before travel."}],
                        }
                    },
                ],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
    }
    from xpeval.adapters.wires import RenderedResponse

    return Reply(raw=RenderedResponse(200, {"content-type": "application/json"}, [json.dumps(body).encode()]))


def test_a_bedrock_cited_passage_keeps_its_text_in_a_plain_answer(
    cli: Cli, server: EmulatorServer, tmp_path: Path
) -> None:
    server.script([_cited_answer()], name="default")
    _, rows = live(cli, tmp_path, server.url, ("bedrock-converse",), "--stream", "never", "--retries", "0")
    (row,) = rows
    assert row["text"] == "The handbook says staff should ask their team lead before travel.", row["text"]


def _answer_texts(body: bytes) -> str:
    """A recorded plain Converse answer's text, read straight from its JSON: every `text`
    block and every `citationsContent` block's `content[].text`, in order."""
    text = ""
    for block in json.loads(body)["output"]["message"]["content"]:
        text += block.get("text", "")
        text += "".join(part["text"] for part in block.get("citationsContent", {}).get("content", []))
    return text


@pytest.mark.skipif(
    not CITATIONS,
    reason="no langchain-aws citations recording in ../shared/corpus/new-wires/bedrock-converse "
    "(langchain-aws__*citations*.yaml.gz) next to the repository",
)
def test_the_real_langchain_aws_citations_recording_decodes_with_its_whole_text(cli: Cli) -> None:
    from xpeval.evals.cassettes import load_cassette

    for path in CITATIONS:
        done = cli("decode", str(path), "--wire", "bedrock-converse", "--json")
        assert done.returncode == 0, (path.name, done.stderr)
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        for row, interaction in zip(rows, load_cassette(path), strict=True):
            if interaction.uri.split("?")[0].endswith("/converse"):
                assert row["text"] == _answer_texts(interaction.response_body), path.name
                assert "citationsContent" in interaction.response_body.decode()


@pytest.mark.parametrize("adapter", ["bedrock-converse", "mistral"])
def test_an_in_stream_throttling_error_is_retried_as_the_same_error_over_http_is(
    cli: Cli, server: EmulatorServer, tmp_path: Path, adapter: str
) -> None:
    server.script([StreamErrorReply(), AnswerReply()], name="default")
    ran, rows = live(cli, tmp_path, server.url, (adapter,), "--stream", "always", "--retries", "1")
    assert [(row["attempt"], row["error_kind"], row["final"]) for row in rows] == [
        (1, "stream", False),
        (2, None, True),
    ], rows
    assert rows[0]["error_status"] == 429 and rows[-1]["correct"]
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_bedrock_stream_split_anywhere_decodes_to_the_same_answer(
    cli: Cli, server: EmulatorServer, tmp_path: Path
) -> None:
    server.script([RechunkedReply(size=7)], name="default")
    ran, rows = live(cli, tmp_path, server.url, ("bedrock-converse",), "--stream", "always", "--retries", "0")
    assert [(row["error_kind"], row["correct"], row["text"]) for row in rows] == [
        (None, True, ANSWER.text)
    ], rows
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_bedrock_stream_that_ends_inside_a_frame_is_truncated(
    cli: Cli, server: EmulatorServer, tmp_path: Path
) -> None:
    server.script([RechunkedReply(size=64, cut=9)], name="default")
    ran, rows = live(cli, tmp_path, server.url, ("bedrock-converse",), "--stream", "always", "--retries", "0")
    assert [(row["error_kind"], row["correct"]) for row in rows] == [("truncated", False)], rows
    assert "ends inside frame" in rows[0]["error_message"]
    assert ran.returncode == 1
