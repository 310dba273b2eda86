"""Moonshot / Kimi: the openai-chat contract at api.moonshot.ai (schema dialect set in the registry)."""

from __future__ import annotations

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import sdk_client_kwargs

BASE_URL = "https://api.moonshot.ai/v1"
DEFAULT_MODEL = "kimi-k2-0905-preview"


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("MOONSHOT_API_KEY")
    client = openai_sdk.AsyncOpenAI(
        api_key=key,
        base_url=settings.base_url_or_env("MOONSHOT_BASE_URL", BASE_URL),
        **sdk_client_kwargs(settings),
    )
    return Adapter(
        contract=contract,
        client=client,
        default_model=settings.model or DEFAULT_MODEL,
        live_ready=key != PLACEHOLDER_API_KEY,
    )
