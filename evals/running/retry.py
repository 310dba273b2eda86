"""Retry timing: exponential backoff with full jitter, overridden by what the provider asked.

Hand-written rather than taken from tenacity: the runner writes a result row per attempt and
keeps one cassette open across attempts, so it owns the loop; only the delay is computed here.
"""

from __future__ import annotations

import random

from xpeval.adapters.contract import ProviderError


def backoff_delay(
    attempt: int,
    error: ProviderError | None,
    *,
    base: float = 1.0,
    cap: float = 60.0,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before attempt `attempt + 1`.

    A provider's Retry-After wins (capped at `cap`); otherwise a uniformly random wait in
    [0, min(cap, base * 2**(attempt - 1))] ("full jitter"), so clients retrying together spread out.
    """
    if error is not None and error.retry_after is not None:
        return min(max(error.retry_after, 0.0), cap)
    ceiling = min(cap, base * (2 ** max(attempt - 1, 0)))
    return (rng or random).uniform(0.0, ceiling)
