"""What an episode cost, from its tokens and the model's published price (`genai-prices`).

Only answers a provider gave (source `live`, or `cassette`: a live recording, priced at the
date it was recorded) have a cost. The local model and the emulator have none, and a model or
provider `genai-prices` does not know stays blank: a price is never guessed.

The episode's whole usage goes to genai-prices, so cached input is priced as it prices it: of
the input tokens (which count cached ones too), cache reads at the model's cache-read price,
cache writes at its cache-write price, the rest at the input price; tiered prices see the
episode's real input size. Cache writes are priced at the 5-minute rate: the rows do not keep
the 1-hour share a provider may report.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from xpeval.adapters.contract import Usage

PRICED_SOURCES = frozenset({"live", "cassette"})


def episode_cost(
    *,
    adapter_id: str,
    model: str,
    source: str,
    usage: Usage,
    at: str | None = None,
    processing: str | None = None,
) -> float | None:
    """US dollars for the episode's tokens; None when it has no known price. `processing="batch"`:
    the provider's Batch API price, where genai-prices knows it (its `processing` price variant);
    where it does not, the online price (docs/batch.md)."""
    if source not in PRICED_SOURCES or usage.input_tokens is None or usage.output_tokens is None:
        return None
    from xpeval.adapters.registry import provider_of

    provider = provider_of(adapter_id).price_provider
    if provider is None:
        return None
    return _price(
        model,
        provider,
        at[:10] if at else None,
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens or 0,
            usage.cache_write_tokens or 0,
        ),
        processing,
    )


@lru_cache(maxsize=4096)
def _price(
    model: str,
    provider: str,
    day: str | None,
    tokens: tuple[int, int, int, int],
    processing: str | None = None,
) -> float | None:
    """genai-prices' total for (input, output, cache read, cache write) tokens, or None."""
    from genai_prices import Usage as PricedUsage
    from genai_prices import calc_price

    inputs, outputs, read, written = tokens
    when = datetime.fromisoformat(day) if day else None
    try:
        priced = calc_price(
            PricedUsage(
                input_tokens=inputs,
                output_tokens=outputs,
                cache_read_tokens=read or None,
                cache_write_tokens=written or None,
            ),
            model,
            provider_id=provider,
            genai_request_timestamp=when,
            price_context={"processing": processing} if processing else None,
        )
    except LookupError:
        return None
    except ValueError:  # counts genai-prices refuses (more cached than input tokens): not a price
        return None
    return float(priced.total_price)
