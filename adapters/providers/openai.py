"""api.openai.com, and every provider reached through the openai SDK's AsyncOpenAI client.

`create` is the factory of the openai-chat and openai-responses wires and of the wrappers that
differ from OpenAI only by their data (base URL, key variables, default model): Moonshot, MiMo,
any OpenAI-compatible server.
"""

from __future__ import annotations

from xpeval.adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from xpeval.adapters.providers._http import sdk_client_kwargs
from xpeval.adapters.providers._spec import Provider, split_query

OPENAI_LOGGERS = ("openai._base_client",)

OPENAI = Provider(
    name="openai",
    default_model="gpt-4.1-mini",
    key_vars=("OPENAI_API_KEY",),
    base_url_var="OPENAI_BASE_URL",
    secret_response_headers=("openai-organization", "openai-project"),
    sdk_loggers=OPENAI_LOGGERS,
    price_provider="openai",
)


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    base_url, query = split_query(provider.base_url(settings.base_url))
    client = openai_sdk.AsyncOpenAI(
        api_key=provider.api_key(settings.secret_key()),
        base_url=base_url,
        **sdk_client_kwargs(settings, query),
    )
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)
