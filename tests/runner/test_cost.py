"""Tokens and cost: a provider's answers are priced from genai-prices, at the date of the
recording for a replayed live cassette; the local model, the emulator and unknown prices stay
blank, never guessed."""

from __future__ import annotations

import math

from tests.gate._rows import frame, row
from xpeval.adapters.contract import Usage
from xpeval.evals.running.cost import episode_cost
from xpeval.evals.verdict.scorecard import scorecard


def test_a_live_openai_episode_has_its_published_price() -> None:
    cost = episode_cost(
        adapter_id="openai-chat",
        model="gpt-4.1-mini",
        source="live",
        usage=Usage(input_tokens=1000, output_tokens=100),
    )
    assert cost is not None and abs(cost - (1000 * 0.4 + 100 * 1.6) / 1e6) < 1e-12


def test_a_replayed_recording_is_priced_at_its_date() -> None:
    cost = episode_cost(
        adapter_id="anthropic-messages",
        model="claude-haiku-4-5",
        source="cassette",
        usage=Usage(input_tokens=1000, output_tokens=100),
        at="2026-11-29T16:25:56+00:00",
    )
    assert cost is not None and cost > 0


def test_unknown_prices_and_unpriced_sources_stay_blank() -> None:
    assert (
        episode_cost(
            adapter_id="openai-compatible",
            model="qwen",
            source="live",
            usage=Usage(input_tokens=5, output_tokens=5),
        )
        is None
    ), "a self-hosted server has no price"
    assert (
        episode_cost(
            adapter_id="openai-chat",
            model="no-such-model-9",
            source="live",
            usage=Usage(input_tokens=5, output_tokens=5),
        )
        is None
    )
    assert (
        episode_cost(
            adapter_id="openai-chat",
            model="gpt-4.1-mini",
            source="emulated",
            usage=Usage(input_tokens=5, output_tokens=5),
        )
        is None
    ), "emulated tokens are not a provider's"
    assert (
        episode_cost(
            adapter_id="openai-chat",
            model="gpt-4.1-mini",
            source="live",
            usage=Usage(input_tokens=None, output_tokens=5),
        )
        is None
    )


def test_a_scorecard_row_sums_its_costs_only_when_every_episode_is_priced() -> None:
    priced = [row(f"c{i}", True).model_copy(update={"cost_usd": 0.001}) for i in range(3)]
    card = scorecard(frame(priced)).iloc[0]
    assert abs(card["cost_usd"] - 0.003) < 1e-12
    partial = [*priced, row("c9", True)]
    assert math.isnan(scorecard(frame(partial)).iloc[0]["cost_usd"])
