"""api.anthropic.com: the direct provider of the anthropic-messages wire."""

from __future__ import annotations

from xpeval.adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from xpeval.adapters.providers._http import sdk_client_kwargs
from xpeval.adapters.providers._spec import Provider, split_query

ANTHROPIC = Provider(
    name="anthropic",
    default_model="claude-haiku-4-5",
    key_vars=("ANTHROPIC_API_KEY",),
    base_url_var="ANTHROPIC_BASE_URL",
    secret_headers=("x-api-key", "authorization"),
    secret_response_headers=("anthropic-organization-id",),
    sdk_loggers=("anthropic._base_client",),
    price_provider="anthropic",
)


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    import anthropic as anthropic_sdk  # lazily: listing adapters must not pay for SDK imports

    base_url, query = split_query(provider.base_url(settings.base_url))
    client = anthropic_sdk.AsyncAnthropic(
        api_key=provider.api_key(settings.secret_key()),
        base_url=base_url,
        **sdk_client_kwargs(settings, query),
    )
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)
