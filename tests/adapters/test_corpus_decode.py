"""`xpeval decode` on every real recording in ../shared/corpus/cassettes.

Each interaction is checked two ways: against an independent reading of the raw bytes written
here for the test (no SDK, no wire code), and, for the quirks PROVENANCE.md lists, against the
value the provider actually sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from tests._corpus import corpus_files, corpus_path
from xpeval.evals.cassettes import Interaction, load_cassette
from xpeval.evals.cassettes.decode import decode_cassette, infer_wire

CASSETTES = corpus_files("cassettes/*/*.yaml")


# --- an independent reading of the raw bytes -------------------------------------------------


def sse_events(body: bytes) -> list[tuple[str | None, str]]:
    """(event, data) pairs of an SSE body; CRLF, comments and multi-line data handled."""
    events: list[tuple[str | None, str]] = []
    event: str | None = None
    data: list[str] = []
    for line in body.decode("utf-8").replace("\r\n", "\n").split("\n"):
        if not line.strip():
            if data:
                events.append((event, "\n".join(data)))
            event, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        events.append((event, "\n".join(data)))
    return events


def args_of(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    return json.loads(raw) if raw and raw.strip() else {}


def error_type_of(body: Any) -> str | None:
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None
    value = error.get("type") or error.get("status")
    if not value and error.get("code") is not None:
        value = str(error["code"])
    return value or None


def expected_chat(body: bytes, stream: bool) -> dict[str, Any]:
    if not stream:
        doc = json.loads(body)
        message = doc["choices"][0]["message"]
        return {
            "calls": [
                (c.get("id") or None, c["function"]["name"], args_of(c["function"]["arguments"]))
                for c in message.get("tool_calls") or []
            ],
            "text": message.get("content") or None,
            "refusal": message.get("refusal") or None,
            "finish": doc["choices"][0]["finish_reason"],
            "error": None,
        }
    calls: dict[int, list[Any]] = {}
    text, refusal, finish, error = "", "", None, None
    for _event, data in sse_events(body):
        if data.startswith("[DONE]"):
            break
        doc = json.loads(data)
        if doc.get("error"):
            error = error_type_of(doc)
            break
        for choice in doc.get("choices") or []:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            refusal += delta.get("refusal") or ""
            for piece in delta.get("tool_calls") or []:
                slot = calls.setdefault(piece["index"], [None, "", ""])
                slot[0] = slot[0] or piece.get("id")
                function = piece.get("function") or {}
                slot[1] = slot[1] or function.get("name") or ""
                slot[2] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return {
        "calls": [(i, n, args_of(a)) for i, n, a in calls.values()],
        "text": text or None,
        "refusal": refusal or None,
        "finish": finish,
        "error": error,
    }


def expected_responses(body: bytes, stream: bool) -> dict[str, Any]:
    if stream:
        finals = [
            json.loads(d)["response"]
            for e, d in sse_events(body)
            if e in ("response.completed", "response.incomplete", "response.failed")
        ]
        doc = finals[-1]
    else:
        doc = json.loads(body)
    calls, text, refusal = [], "", ""
    for item in doc.get("output") or []:
        if item["type"] == "function_call":
            calls.append((item["call_id"], item["name"], args_of(item["arguments"])))
        elif item["type"] == "message":
            for part in item["content"]:
                text += part.get("text") or ""
                refusal += part.get("refusal") or ""
    return {
        "calls": calls,
        "text": text or None,
        "refusal": refusal or None,
        "finish": doc["status"],
        "error": None,
    }


def expected_anthropic(body: bytes, stream: bool) -> dict[str, Any]:
    if not stream:
        doc = json.loads(body)
        blocks, finish = doc["content"], doc["stop_reason"]
    else:
        blocks, finish = [], None
        partial: dict[int, str] = {}
        for event, data in sse_events(body):
            doc = json.loads(data)
            if event == "content_block_start":
                blocks.append(dict(doc["content_block"]))
            elif event == "content_block_delta":
                delta = doc["delta"]
                if delta["type"] == "text_delta":
                    blocks[doc["index"]]["text"] += delta["text"]
                elif delta["type"] == "input_json_delta":
                    partial[doc["index"]] = partial.get(doc["index"], "") + delta["partial_json"]
            elif event == "message_delta":
                finish = doc["delta"].get("stop_reason") or finish
        for index, raw in partial.items():
            blocks[index]["input"] = args_of(raw)
    calls = [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
    text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
    return {"calls": calls, "text": text or None, "finish": finish, "error": None}


def expected_gemini(body: bytes, stream: bool) -> dict[str, Any]:
    if not stream:
        chunks = [json.loads(body)]
    elif body.lstrip().startswith(b"["):
        chunks = json.loads(body)
    else:
        chunks = [json.loads(d) for _e, d in sse_events(body)]
    calls, text, finish = [], "", None
    for chunk in chunks:
        for candidate in chunk.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "functionCall" in part:
                    fc = part["functionCall"]
                    calls.append((fc.get("id"), fc["name"], fc.get("args") or {}))
                elif "text" in part and not part.get("thought"):
                    text += part["text"]
            finish = candidate.get("finishReason") or finish
    return {"calls": calls, "text": text or None, "finish": finish, "error": None}


_EXPECTED = {
    "openai-chat": expected_chat,
    "openai-responses": expected_responses,
    "anthropic-messages": expected_anthropic,
    "google-genai": expected_gemini,
}


def expected_row(interaction: Interaction) -> dict[str, Any]:
    wire = infer_wire(interaction.uri)
    body = interaction.response_body
    if interaction.status >= 400:
        return {"calls": [], "text": None, "finish": None, "error": error_type_of(json.loads(body))}
    request = interaction.request_json() or {}
    stream = (
        ":streamGenerateContent" in interaction.uri if wire == "google-genai" else bool(request.get("stream"))
    )
    return _EXPECTED[wire](body, stream)


# --- the tests ------------------------------------------------------------------------------


def test_the_corpus_has_the_88_interactions_provenance_lists() -> None:
    corpus_path("cassettes")
    assert sum(len(load_cassette(path)) for path in CASSETTES) == 88


@pytest.mark.corpus
@pytest.mark.parametrize("cassette", CASSETTES, ids=[p.name for p in CASSETTES])
def test_decode_matches_what_the_provider_sent(cassette: Path) -> None:
    interactions = load_cassette(cassette)
    rows = decode_cassette(interactions)
    assert [row["interaction"] for row in rows] == list(range(len(interactions)))
    for row, interaction in zip(rows, interactions, strict=True):
        expected = expected_row(interaction)
        where = f"{cassette.name} interaction {row['interaction']}"
        assert row["status"] == interaction.status, where
        assert [(c["id"], c["name"], c["arguments"]) for c in row["tool_calls"]] == expected["calls"], where
        assert row["text"] == expected["text"], where
        assert row["refusal"] == expected.get("refusal"), where
        assert row["finish_reason"] == expected["finish"], where
        assert row["error_type"] == expected["error"], where


def _decoded(directory: str, name: str) -> list[dict[str, Any]]:
    return decode_cassette(load_cassette(corpus_path("cassettes", directory, name)))


def test_call_without_provider_id_decodes_to_null_id() -> None:
    rows = _decoded("openai-chat", "pydantic-ai__test_compatible_api_with_tool_calls_without_id.yaml")
    assert rows[0]["tool_calls"] == [{"id": None, "name": "get_current_time", "arguments": {}}]


def test_empty_string_arguments_decode_to_an_empty_object() -> None:
    rows = _decoded("openai-chat", "chatlas__test_databricks_tool_variations.yaml")
    assert rows[0]["tool_calls"][0]["arguments"] == {}
    assert rows[0]["text"] is not None, "text and a call arrive in the same turn"


def test_tool_call_under_finish_reason_stop_keeps_the_raw_reason() -> None:
    rows = _decoded(
        "openai-chat", "mirascope__test_structured_output_resume_stream__tool__openai_gpt_4o_completions.yaml"
    )
    assert rows[0]["finish_reason"] == "stop" and len(rows[0]["tool_calls"]) == 1


def test_snowflake_empty_legacy_fields_are_not_calls() -> None:
    rows = _decoded("openai-chat", "pydantic-ai__test_snowflake_tool_calling.yaml")
    assert [c["name"] for c in rows[0]["tool_calls"]] == ["get_weather"]
    assert rows[0]["finish_reason"] == "" and rows[1]["tool_calls"] == []


def test_errors_inside_a_200_stream_are_reported_with_their_type() -> None:
    groq = _decoded(
        "openai-chat", "pydantic-ai__test_groq__test_tool_use_failed_error_streaming_with_text.yaml"
    )
    assert (groq[0]["status"], groq[0]["error_type"], groq[0]["text"]) == (
        200,
        "invalid_request_error",
        "maybe",
    )
    openrouter = _decoded("openai-chat", "pydantic-ai__test_openrouter_stream_error.yaml")
    assert (openrouter[0]["finish_reason"], openrouter[0]["error_type"]) == ("length", "400")


def test_error_without_a_type_reports_its_code() -> None:
    rows = _decoded("openai-chat", "pydantic-ai__test_openrouter_errors_raised.yaml")
    assert [(r["status"], r["error_type"]) for r in rows] == [(429, "429")] * 3


def test_reasoning_and_thoughts_are_not_text() -> None:
    gemini = _decoded("google-generate-content", "llm-gemini__test_tools.yaml")
    assert gemini[0]["text"] is None and gemini[0]["tool_calls"]
    claude = _decoded(
        "anthropic-messages",
        "llm-anthropic__test_fixed_version_tool_chain_with_thinking_display_regression.yaml",
    )
    assert claude[0]["text"] is None and claude[0]["tool_calls"][0]["name"] == "fixed_version"


def test_anthropic_empty_input_json_delta_is_an_empty_object() -> None:
    rows = _decoded("anthropic-messages", "llm-anthropic__test_tools.yaml")
    assert [c["arguments"] for c in rows[0]["tool_calls"]] == [{}, {}]


def test_responses_call_id_not_item_id_is_the_call_id() -> None:
    rows = _decoded(
        "openai-responses", "pydantic-ai__test_tool_choice_matrix[required-openai_responses].yaml"
    )
    assert rows[0]["tool_calls"][0]["id"].startswith("call_")


def test_gemini_json_array_stream_decodes() -> None:
    rows = _decoded("google-generate-content", "llm-gemini__test_tools_with_nested_pydantic_models.yaml")
    assert rows[0]["tool_calls"][0]["arguments"]["address"]["city"] == "San Francisco"


def test_decode_cli_prints_one_json_line_per_interaction(cli: Cli) -> None:
    path = corpus_path(
        "cassettes",
        "anthropic-messages",
        "mirascope__test_call_with_tools__anthropic_claude_sonnet_4_0__stream.yaml",
    )
    done = cli("decode", "--json", str(path))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["interaction"] for r in rows] == [0, 1]
    assert set(rows[0]) == {
        "interaction",
        "status",
        "tool_calls",
        "text",
        "refusal",
        "finish_reason",
        "error_type",
    }
