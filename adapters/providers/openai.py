"""api.openai.com: the direct provider of the openai-chat and openai-responses wires."""

from __future__ import annotations

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import sdk_client_kwargs

DEFAULT_MODEL = "gpt-4.1-mini"


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("OPENAI_API_KEY")
    client = openai_sdk.AsyncOpenAI(
        api_key=key,
        base_url=settings.base_url_or_env("OPENAI_BASE_URL", None),
        **sdk_client_kwargs(settings),
    )
    return Adapter(
        contract=contract,
        client=client,
        default_model=settings.model or DEFAULT_MODEL,
        live_ready=key != PLACEHOLDER_API_KEY,
    )
