"""api.anthropic.com: the direct provider of the anthropic-messages wire."""

from __future__ import annotations

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import sdk_client_kwargs

DEFAULT_MODEL = "claude-haiku-4-5"


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import anthropic as anthropic_sdk  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("ANTHROPIC_API_KEY")
    client = anthropic_sdk.AsyncAnthropic(
        api_key=key,
        base_url=settings.base_url_or_env("ANTHROPIC_BASE_URL", None),
        **sdk_client_kwargs(settings),
    )
    return Adapter(
        contract=contract,
        client=client,
        default_model=settings.model or DEFAULT_MODEL,
        live_ready=key != PLACEHOLDER_API_KEY,
    )
