"""The emulator against reality: every real 2xx response in ../shared/corpus/cassettes.

For each one, the decoded TurnResult is rendered back through the emulator (over loopback
HTTP, by the wire's own `render()`) and decoded again: calls, text, finish reason and error
must come back the same. For the providers' own recordings (OpenAI, Anthropic, Google), the
rendered body must also carry the same JSON fields as the real one, per response kind (the
plain body, or each SSE event type), except the differences listed in ALLOWED, each with its
reason. OpenAI-compatible third parties add fields of their own; those are not chased.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests._corpus import corpus_files, corpus_path
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import TurnResult, WireName
from xpeval.adapters.registry import create_adapter, direct_adapter_for_wire
from xpeval.adapters.wires import get_wire
from xpeval.evals.cassettes import Interaction, load_cassette
from xpeval.evals.cassettes.decode import _model_of, decode_interaction, infer_wire
from xpeval.evals.cassettes.ordered_replay import recorded_response
from xpeval.evals.emulator import EmulatorServer, Reply

OWN_HOSTS: dict[WireName, str] = {
    "openai-chat": "api.openai.com",
    "openai-responses": "api.openai.com",
    "anthropic-messages": "api.anthropic.com",
    "google-genai": "generativelanguage.googleapis.com",
}

CHANGED_OVER_TIME = "the API added it after some corpus recordings were made (render follows the newest)"
ALLOWED: dict[WireName, dict[str, str]] = {
    "openai-chat": {
        "obfuscation": "stream padding OpenAI added in 2025; " + CHANGED_OVER_TIME,
        "service_tier": CHANGED_OVER_TIME,
        "choices.delta.refusal": CHANGED_OVER_TIME,
        "choices.logprobs": "gpt-5 models leave `logprobs` out of plain responses; gpt-4o sends null",
        "usage": "a 2024 recording did not ask for stream usage; our adapters always send include_usage",
    },
    "openai-responses": {
        "tools": "echo of the request's tools: render() never sees the request and no decoder reads it",
        "tool_choice.name": "echo of the request's forced tool (same reason)",
        "tool_choice.type": "echo of the request's forced tool (same reason)",
        "text.format": "echo of the request's structured-output format (same reason)",
        "billing": CHANGED_OVER_TIME,
        "frequency_penalty": CHANGED_OVER_TIME,
        "presence_penalty": CHANGED_OVER_TIME,
        "moderation": CHANGED_OVER_TIME,
        "prompt_cache_retention": CHANGED_OVER_TIME,
        "completed_at": CHANGED_OVER_TIME,
        "phase": "only gpt-5.x message items carry a phase",
    },
    "anthropic-messages": {
        "stop_details": CHANGED_OVER_TIME,
        "inference_geo": CHANGED_OVER_TIME,
        "caller": CHANGED_OVER_TIME,
        "output_tokens_details.thinking_tokens": "sent by thinking models only",
        "output_tokens_details": "sent by thinking models only",
    },
    "google-genai": {
        "serviceTier": CHANGED_OVER_TIME,
        "thoughtsTokenCount": "sent by thinking models only",
        "candidatesTokensDetails": "sent by some models only",
        "finishMessage": "some models explain a function-call finish in words; nothing decodes it",
        "candidates.index": "missing from some streamed chunks; present in most",
        "content.parts.text": "models stream an empty or thought text part next to calls; the emulator "
        "renders the calls alone",
        "content.parts.thought": "thought summaries are reasoning: not rendered (reasoning is not text)",
    },
}


def _responses() -> list[tuple[str, Interaction]]:
    out: list[tuple[str, Interaction]] = []
    for path in corpus_files("cassettes/*/*.yaml"):
        out.extend(
            (f"{path.parent.name}/{path.stem}#{i.index}", i)
            for i in load_cassette(path)
            if 200 <= i.status < 300
        )
    return out


RESPONSES = _responses()


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


async def _through_emulator(
    emulator: EmulatorServer, wire_name: WireName, result: TurnResult, model: str, stream: bool
) -> TurnResult:
    script = emulator.script([Reply(result=result, model=model)])
    adapter = create_adapter(
        direct_adapter_for_wire(wire_name), AdapterSettings(transport=emulator.transport(script), timeout=20)
    )
    wire = adapter.wire
    kwargs = wire.minimal_request(model)
    kwargs["stream"] = stream
    try:
        return await wire.send(adapter.client, kwargs)
    finally:
        await adapter.aclose()


def _essentials(result: TurnResult) -> dict[str, Any]:
    return {
        "calls": [(c.id, c.name, c.arguments) for c in result.tool_calls],
        "text": result.text,
        "finish": result.raw_finish_reason,
        "error": (result.error.type, result.error.kind) if result.error else None,
    }


def field_paths(document: Any, prefix: str = "") -> set[str]:
    """Every field of a JSON document as a dotted path, list positions dropped."""
    paths: set[str] = set()
    if isinstance(document, dict):
        for key, value in document.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            paths |= field_paths(value, path)
    elif isinstance(document, list):
        for value in document:
            paths |= field_paths(value, prefix)
    return paths


def fields_by_kind(body: bytes, stream: bool) -> dict[str, set[str]]:
    """Field paths per response kind: the plain body, or each SSE event type."""
    if not stream:
        return {"body": field_paths(json.loads(body))}
    if body.lstrip().startswith(b"["):
        chunks: list[tuple[str | None, Any]] = [(None, c) for c in json.loads(body)]
    else:
        chunks = []
        event: str | None = None
        data: list[str] = []
        for line in [*body.decode().replace("\r\n", "\n").split("\n"), ""]:
            if not line.strip():
                if data and data[0] != "[DONE]":
                    chunks.append((event, json.loads("\n".join(data))))
                event, data = None, []
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
    kinds: dict[str, set[str]] = {}
    for event, chunk in chunks:
        kind = event or (chunk.get("type") if isinstance(chunk, dict) else None) or "chunk"
        kinds.setdefault(kind, set()).update(field_paths(chunk))
    return kinds


def _covered(path: str, allowed: dict[str, str]) -> bool:
    """Whether an allowed entry names this field or one of its parents (at any depth)."""
    segments = path.split(".")
    for entry in allowed:
        wanted = entry.split(".")
        for start in range(len(segments) - len(wanted) + 1):
            if segments[start : start + len(wanted)] == wanted:
                return True
    return False


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "interaction"), RESPONSES, ids=[name for name, _ in RESPONSES])
def test_rendering_a_real_response_decodes_to_the_same_result_with_the_same_fields(
    emulator: EmulatorServer, name: str, interaction: Interaction
) -> None:
    wire_name = infer_wire(interaction.uri)
    wire = get_wire(wire_name)
    stream = wire.is_stream(interaction.uri, interaction.request_json())
    real = asyncio.run(decode_interaction(interaction, wire_name))
    model = real.model or _model_of(interaction, wire)
    emulated = asyncio.run(_through_emulator(emulator, wire_name, real, model, stream))
    assert _essentials(emulated) == _essentials(real)

    if urlsplit(interaction.uri).hostname != OWN_HOSTS[wire_name]:
        return  # an OpenAI-compatible third party: its own extra fields are not chased
    real_kinds = fields_by_kind(recorded_response(interaction).content, stream)
    rendered_kinds = fields_by_kind(wire.render(real, model=model, stream=stream).body, stream)
    allowed = ALLOWED[wire_name]
    assert sorted(set(real_kinds) - set(rendered_kinds)) == [], "event types the emulator never sends"
    for kind, real_fields in real_kinds.items():
        rendered = rendered_kinds[kind]
        missing = sorted(p for p in real_fields - rendered if not _covered(p, allowed))
        extra = sorted(p for p in rendered - real_fields if not _covered(p, allowed))
        assert (missing, extra) == ([], []), f"{kind}: fields missing from / added by the emulator"


def test_every_allowed_difference_is_still_needed() -> None:
    """An allowance no real response needs any more must go (the list only shrinks by evidence)."""
    if not RESPONSES:
        pytest.skip("the shared corpus is absent")
    used: set[tuple[str, str]] = set()
    for _, interaction in RESPONSES:
        wire_name = infer_wire(interaction.uri)
        if urlsplit(interaction.uri).hostname != OWN_HOSTS[wire_name]:
            continue
        wire = get_wire(wire_name)
        stream = wire.is_stream(interaction.uri, interaction.request_json())
        real = asyncio.run(decode_interaction(interaction, wire_name))
        real_kinds = fields_by_kind(recorded_response(interaction).content, stream)
        rendered_kinds = fields_by_kind(
            wire.render(real, model=real.model or _model_of(interaction, wire), stream=stream).body, stream
        )
        for kind in set(real_kinds) & set(rendered_kinds):
            for path in real_kinds[kind] ^ rendered_kinds[kind]:
                used.update((wire_name, entry) for entry in ALLOWED[wire_name] if _covered(path, {entry: ""}))
    unused = sorted((w, e) for w, entries in ALLOWED.items() for e in entries if (w, e) not in used)
    assert unused == [], f"allowances no corpus response needs: {unused}"


def test_the_corpus_holds_the_responses_this_file_checks() -> None:
    corpus_path("cassettes")
    assert len(RESPONSES) >= 60
