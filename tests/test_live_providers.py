"""Live checks against real providers: skipped unless XPEVAL_LIVE=1 and the adapter's key is set.

conftest.py removes provider keys from the environment for every other test, so these are the
only tests that can reach a provider.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from xpeval.adapters.registry import create_adapter
from xpeval.evals.cases import load_cases
from xpeval.evals.running.play import play_case
from xpeval.evals.verdict.scoring import score

pytestmark = pytest.mark.live

CASE = next(loaded.case for loaded in load_cases() if loaded.case.id == "weather_simple_01")


def test_a_live_provider_answers_a_simple_case(xpeval_adapter_id: str) -> None:
    if os.environ.get("XPEVAL_LIVE") != "1":
        pytest.skip("live provider test: set XPEVAL_LIVE=1 and the provider's API key to run it")
    adapter = create_adapter(xpeval_adapter_id)
    if not adapter.live_ready:
        pytest.skip(f"live provider test: no API key configured for {xpeval_adapter_id}")
    outcome = asyncio.run(play_case(adapter, CASE, adapter.default_model))
    assert outcome.error is None, outcome.error
    verdict = score(CASE, outcome.calls_per_turn[0])
    assert verdict.tool_selection_correct, verdict.reason
