"""Anthropic's usage counts cached input: its `input_tokens` are only the tokens after the last
cache breakpoint, so the input is those plus cache reads plus cache writes (genai-prices reads
the wire the same way), and the cost prices each share at its own rate."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import REPO_ROOT, corpus_files
from tests.adapters.test_corpus_decode import sse_events
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import TurnResult, Usage
from xpeval.adapters.registry import create_adapter
from xpeval.evals.cassettes import Interaction, load_cassette
from xpeval.evals.cassettes.decode import decode_interaction
from xpeval.evals.emulator import EmulatorServer, Reply
from xpeval.evals.running.cost import episode_cost

COMMITTED = sorted((REPO_ROOT / "cassettes" / "anthropic-messages").glob("*/*.yaml"))
CACHED = [
    path
    for path in [*COMMITTED[:8], *corpus_files("cassettes/anthropic-messages/*.yaml")]
    if b"cache_read_input_tokens" in path.read_bytes()
]


def raw_counts(interaction: Interaction) -> dict[str, int]:
    """The usage counts as sent, read from the bytes (the later event's count wins, as the
    stream's usage is cumulative)."""
    body = interaction.response_body or b""
    documents: list[Any] = (
        [json.loads(data) for _, data in sse_events(body) if data.startswith("{")]
        if body.lstrip().startswith(b"event:") or b"\ndata:" in body
        else [json.loads(body)]
    )
    counts: dict[str, int] = {}
    for document in documents:
        usage = document.get("usage") or (document.get("message") or {}).get("usage") or {}
        counts.update({k: v for k, v in usage.items() if isinstance(v, int) and v})
    return counts


@pytest.mark.parametrize("path", CACHED, ids=[f"{p.parent.name}/{p.stem}" for p in CACHED])
def test_decoded_input_tokens_include_cache_reads_and_writes(path: Path) -> None:
    checked = 0
    for interaction in load_cassette(path):
        if not 200 <= interaction.status < 300:
            continue
        counts = raw_counts(interaction)
        result = asyncio.run(decode_interaction(interaction, "anthropic-messages"))
        assert result.usage is not None
        read = counts.get("cache_read_input_tokens", 0)
        written = counts.get("cache_creation_input_tokens", 0)
        assert result.usage.input_tokens == counts.get("input_tokens", 0) + read + written
        assert (result.usage.cache_read_tokens or 0, result.usage.cache_write_tokens or 0) == (read, written)
        checked += 1
    assert checked


def test_a_recording_with_406_cached_and_1_new_input_tokens_counts_407_in() -> None:
    cached = [p for p in COMMITTED if b'"cache_read_input_tokens":406,"input_tokens":1' in p.read_bytes()]
    if not cached:
        pytest.skip("no committed recording with exactly 406 cached tokens (re-recorded since)")
    interaction = next(
        i for i in load_cassette(cached[0]) if b'"cache_read_input_tokens":406' in (i.response_body or b"")
    )
    result = asyncio.run(decode_interaction(interaction, "anthropic-messages"))
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (407, 406)


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_the_emulator_renders_cache_counts_that_decode_back_the_same(
    emulator: EmulatorServer, stream: bool
) -> None:
    usage = Usage(
        input_tokens=1407, output_tokens=12, total_tokens=1419, cache_read_tokens=1000, cache_write_tokens=400
    )
    script = emulator.script([Reply(result=TurnResult(text="ok", usage=usage), model="claude-sonnet-4-0")])

    async def go() -> TurnResult:
        adapter = create_adapter(
            "anthropic-messages", AdapterSettings(transport=emulator.transport(script), timeout=20)
        )
        try:
            kwargs = adapter.wire.minimal_request("claude-sonnet-4-0")
            kwargs["stream"] = stream
            return await adapter.wire.send(adapter.client, kwargs)
        finally:
            await adapter.aclose()

    assert asyncio.run(go()).usage == usage


def test_cached_input_is_priced_as_genai_prices_prices_the_raw_anthropic_usage() -> None:
    from genai_prices import calc_price, extract_usage

    raw = {
        "model": "claude-sonnet-4-0",
        "usage": {
            "input_tokens": 1,
            "cache_read_input_tokens": 406,
            "cache_creation_input_tokens": 120,
            "output_tokens": 30,
        },
    }
    extracted = extract_usage(raw, provider_id="anthropic")
    theirs = float(calc_price(extracted.usage, "claude-sonnet-4-0", provider_id="anthropic").total_price)
    ours = episode_cost(
        adapter_id="anthropic-messages",
        model="claude-sonnet-4-0",
        source="live",
        usage=Usage(input_tokens=527, output_tokens=30, cache_read_tokens=406, cache_write_tokens=120),
    )
    assert ours == pytest.approx(theirs, rel=1e-12)
    uncached_only = episode_cost(
        adapter_id="anthropic-messages",
        model="claude-sonnet-4-0",
        source="live",
        usage=Usage(input_tokens=1, output_tokens=30),
    )
    assert uncached_only is not None and ours is not None and uncached_only < ours, (
        "what the wire's 'input_tokens' alone undercounted"
    )
