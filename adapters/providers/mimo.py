"""Xiaomi MiMo: the openai-chat contract at its own base URL and key."""

from __future__ import annotations

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import sdk_client_kwargs

BASE_URL = "https://api.xiaomimimo.com/v1"
DEFAULT_MODEL = "mimo-v2-flash"


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("MIMO_API_KEY")
    client = openai_sdk.AsyncOpenAI(
        api_key=key,
        base_url=settings.base_url_or_env("MIMO_BASE_URL", BASE_URL),
        **sdk_client_kwargs(settings),
    )
    return Adapter(
        contract=contract,
        client=client,
        default_model=settings.model or DEFAULT_MODEL,
        live_ready=key != PLACEHOLDER_API_KEY,
    )
