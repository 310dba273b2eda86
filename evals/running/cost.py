"""What an episode cost, from its tokens and the model's published price (`genai-prices`).

Only answers a provider gave (source `live`, or `cassette`: a live recording, priced at the
date it was recorded) have a cost. The local model and the emulator have none, and a model or
provider `genai-prices` does not know stays blank: a price is never guessed.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

PRICED_SOURCES = frozenset({"live", "cassette"})


def episode_cost(
    *,
    adapter_id: str,
    model: str,
    source: str,
    input_tokens: int | None,
    output_tokens: int | None,
    at: str | None = None,
) -> float | None:
    """US dollars for the episode's tokens; None when it has no known price."""
    if source not in PRICED_SOURCES or input_tokens is None or output_tokens is None:
        return None
    from xpeval.adapters.registry import provider_of

    provider = provider_of(adapter_id).price_provider
    if provider is None:
        return None
    per_token = _prices(model, provider, at[:10] if at else None)
    if per_token is None:
        return None
    return input_tokens * per_token[0] + output_tokens * per_token[1]


@lru_cache(maxsize=256)
def _prices(model: str, provider: str, day: str | None) -> tuple[float, float] | None:
    """Dollars per input and per output token (measured on a million of each, exactly)."""
    from genai_prices import Usage, calc_price

    when = datetime.fromisoformat(day) if day else None
    try:
        inputs = calc_price(
            Usage(input_tokens=1_000_000, output_tokens=0),
            model,
            provider_id=provider,
            genai_request_timestamp=when,
        )
        outputs = calc_price(
            Usage(input_tokens=0, output_tokens=1_000_000),
            model,
            provider_id=provider,
            genai_request_timestamp=when,
        )
    except LookupError:
        return None
    return float(inputs.total_price) / 1e6, float(outputs.total_price) / 1e6
