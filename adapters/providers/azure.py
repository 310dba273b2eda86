"""Azure OpenAI: the openai-responses contract behind Azure's URL shapes and api-key header.

Two ways Azure is reached, two adapters: the deployments path with an `api-version` query
(`azure-openai`, through the SDK's AzureOpenAI client) and the v1 endpoint at `/openai/v1`
(`azure`), which is plain OpenAI behind an `api-key` header.
"""

from __future__ import annotations

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import sdk_client_kwargs

DEFAULT_ENDPOINT = "https://example-resource.openai.azure.com"
DEFAULT_API_VERSION = "2025-04-01-preview"
DEFAULT_DEPLOYMENT = "gpt-4.1-mini"


def _endpoint(settings: AdapterSettings) -> str:
    return (settings.base_url_or_env("AZURE_OPENAI_ENDPOINT", DEFAULT_ENDPOINT) or DEFAULT_ENDPOINT).rstrip(
        "/"
    )


def create_deployment(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("AZURE_OPENAI_API_KEY")
    client = openai_sdk.AsyncAzureOpenAI(
        azure_endpoint=_endpoint(settings),
        api_key=key,
        api_version=settings.api_version or DEFAULT_API_VERSION,
        **sdk_client_kwargs(settings),
    )
    return Adapter(
        contract=contract,
        client=client,
        default_model=settings.model or DEFAULT_DEPLOYMENT,
        live_ready=key != PLACEHOLDER_API_KEY,
    )


def create_v1(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("AZURE_OPENAI_API_KEY")
    kwargs = sdk_client_kwargs(settings)
    kwargs["default_headers"] = {**kwargs.get("default_headers", {}), "api-key": key}
    client = openai_sdk.AsyncOpenAI(api_key=key, base_url=f"{_endpoint(settings)}/openai/v1", **kwargs)
    return Adapter(
        contract=contract,
        client=client,
        default_model=settings.model or DEFAULT_DEPLOYMENT,
        live_ready=key != PLACEHOLDER_API_KEY,
    )
