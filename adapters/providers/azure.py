"""Azure OpenAI: the openai-responses contract behind Azure's URL shapes and api-key header.

Two ways Azure is reached, two adapters: the deployments path with an `api-version` query
(`azure-openai`, through the SDK's AzureOpenAI client) and the v1 endpoint at `/openai/v1`
(`azure`), which is plain OpenAI behind an `api-key` header.
"""

from __future__ import annotations

from xpeval.adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from xpeval.adapters.providers._http import sdk_client_kwargs
from xpeval.adapters.providers._spec import Provider, split_query
from xpeval.adapters.providers.openai import OPENAI_LOGGERS

DEFAULT_API_VERSION = "2025-04-01-preview"

AZURE = Provider(
    name="azure",
    default_model="gpt-4.1-mini",
    key_vars=("AZURE_OPENAI_API_KEY",),
    base_url_var="AZURE_OPENAI_ENDPOINT",
    default_base_url="https://example-resource.openai.azure.com",
    secret_headers=("api-key", "authorization"),
    sdk_loggers=OPENAI_LOGGERS,
    price_provider="azure",
    ready_when=(("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"),),
    extra_env={"api_version": "OPENAI_API_VERSION"},
)


def _endpoint(provider: Provider, settings: AdapterSettings) -> tuple[str, dict[str, str]]:
    url, query = split_query(provider.base_url(settings.base_url))
    return (url or "").rstrip("/"), query


def create_deployment(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    endpoint, query = _endpoint(provider, settings)
    client = openai_sdk.AsyncAzureOpenAI(
        azure_endpoint=endpoint,
        api_key=provider.api_key(settings.secret_key()),
        api_version=settings.api_version or provider.env("api_version") or DEFAULT_API_VERSION,
        **sdk_client_kwargs(settings, query),
    )
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)


def create_v1(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    endpoint, query = _endpoint(provider, settings)
    key = provider.api_key(settings.secret_key())
    kwargs = sdk_client_kwargs(settings, query)
    kwargs["default_headers"] = {**kwargs.get("default_headers", {}), "api-key": key}
    client = openai_sdk.AsyncOpenAI(api_key=key, base_url=f"{endpoint}/openai/v1", **kwargs)
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)
