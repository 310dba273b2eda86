"""generativelanguage.googleapis.com: the direct provider of the google-genai wire."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import async_http_client

if TYPE_CHECKING:
    from google.genai import types

DEFAULT_MODEL = "gemini-2.5-flash"


def http_options(settings: AdapterSettings, base_url: str | None) -> types.HttpOptions:
    from google.genai import types

    """HttpOptions shared with the Vertex wrapper: base URL, timeout (ms), no SDK retries."""
    options: dict[str, Any] = {"timeout": int(settings.timeout * 1000)}
    if base_url:
        options["base_url"] = base_url
    if settings.headers:
        options["headers"] = dict(settings.headers)
    client = async_http_client(settings)
    if client is not None:
        options["httpx_async_client"] = client
    return types.HttpOptions(**options)


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    from google import genai  # lazily: listing adapters must not pay for SDK imports

    client = genai.Client(
        api_key=settings.key_or_env("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        http_options=http_options(settings, settings.base_url_or_env("GOOGLE_GEMINI_BASE_URL", None)),
    )
    return Adapter(contract=contract, client=client.aio, default_model=settings.model or DEFAULT_MODEL)
