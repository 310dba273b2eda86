"""generativelanguage.googleapis.com: the direct provider of the google-genai wire."""

from __future__ import annotations

import ssl
from functools import cache
from typing import TYPE_CHECKING, Any

import httpx2

from xpeval.adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from xpeval.adapters.providers._http import async_http_client
from xpeval.adapters.providers._spec import Provider, split_query

if TYPE_CHECKING:
    from google.genai import types

GOOGLE_LOGGERS = ("google_genai._api_client", "google_genai.models")

GEMINI = Provider(
    name="gemini",
    default_model="gemini-2.5-flash",
    key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    base_url_var="GOOGLE_GEMINI_BASE_URL",
    secret_headers=("x-goog-api-key", "authorization"),
    sdk_loggers=GOOGLE_LOGGERS,
    price_provider="google",
)


def http_options(settings: AdapterSettings, base_url: str | None) -> types.HttpOptions:
    """HttpOptions shared with the Vertex wrapper: base URL, timeout (ms), our HTTP client."""
    from google.genai import types

    url, query = split_query(base_url)
    options: dict[str, Any] = {
        "timeout": int(settings.timeout * 1000),
        "httpx_async_client": async_http_client(settings, query),
        # Without a sync client too, the SDK builds one with fresh TLS contexts (~150 ms) that
        # the async adapter never uses.
        "httpx_client": httpx2.Client(transport=_AsyncOnly()),
        # Likewise the TLS context it makes for websockets (the Live API, unused here): share one.
        "async_client_args": {"ssl": _websocket_tls_context()},
    }
    if url:
        options["base_url"] = url
    if settings.headers:
        options["headers"] = dict(settings.headers)
    return types.HttpOptions(**options)


@cache
def _websocket_tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


class _AsyncOnly(httpx2.BaseTransport):
    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError("xpeval drives google-genai through its async client only")


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    from google import genai  # lazily: listing adapters must not pay for SDK imports

    client = genai.Client(
        api_key=provider.api_key(settings.secret_key()),
        http_options=http_options(settings, provider.base_url(settings.base_url)),
    )
    return Adapter(contract=contract, provider=provider, client=client.aio, settings=settings)
