"""generativelanguage.googleapis.com: the direct provider of the google-genai wire."""

from __future__ import annotations

import ssl
from functools import cache
from typing import TYPE_CHECKING, Any

import httpx2

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
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
        # Without a sync client too, the SDK builds one with fresh TLS contexts (~150 ms) that
        # the async adapter never uses.
        options["httpx_client"] = httpx2.Client(transport=_AsyncOnly())
        # Likewise the TLS context it makes for websockets (the Live API, unused here): share one.
        options["async_client_args"] = {"ssl": _websocket_tls_context()}
    return types.HttpOptions(**options)


@cache
def _websocket_tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


class _AsyncOnly(httpx2.BaseTransport):
    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError("xpeval drives google-genai through its async client only")


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    from google import genai  # lazily: listing adapters must not pay for SDK imports

    key = settings.key_or_env("GEMINI_API_KEY", "GOOGLE_API_KEY")
    client = genai.Client(
        api_key=key,
        http_options=http_options(settings, settings.base_url_or_env("GOOGLE_GEMINI_BASE_URL", None)),
    )
    return Adapter(
        contract=contract,
        client=client.aio,
        default_model=settings.model or DEFAULT_MODEL,
        live_ready=key != PLACEHOLDER_API_KEY,
    )
