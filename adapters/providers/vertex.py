"""Gemini on Vertex AI: the google-genai contract at Vertex's project/location URL shape.

With a project configured it uses Vertex's project path and Google credentials; with only an
API key it uses Vertex express mode. The schema dialect (OpenAPI `parameters`) is set in the
registry.
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from xpeval.adapters.providers._spec import PLACEHOLDER_API_KEY, Provider
from xpeval.adapters.providers.google import GEMINI, GOOGLE_LOGGERS, http_options

VERTEX = Provider(
    name="vertex",
    default_model=GEMINI.default_model,
    key_vars=("VERTEX_API_KEY", "GOOGLE_API_KEY"),
    base_url_var="VERTEX_BASE_URL",
    secret_headers=("x-goog-api-key", "authorization"),
    sdk_loggers=GOOGLE_LOGGERS,
    price_provider="google",
    ready_when=(
        ("VERTEX_API_KEY",),
        ("GOOGLE_API_KEY",),
        ("GOOGLE_CLOUD_PROJECT", "GOOGLE_APPLICATION_CREDENTIALS"),
    ),
    extra_env={"project": "GOOGLE_CLOUD_PROJECT", "location": "GOOGLE_CLOUD_LOCATION"},
)


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    from google import genai

    project = settings.project or provider.env("project")
    location = settings.location or provider.env("location") or "us-central1"
    kwargs: dict[str, Any] = {
        "vertexai": True,
        "http_options": http_options(settings, provider.base_url(settings.base_url)),
    }
    key = provider.api_key(settings.secret_key())
    if project:
        kwargs.update(project=project, location=location)
        if key == PLACEHOLDER_API_KEY:
            from google.oauth2.credentials import Credentials

            # Replay and the emulator need the project URL shape without real credentials. A
            # static token never needs refreshing (AnonymousCredentials fails on refresh).
            kwargs["credentials"] = Credentials(token=PLACEHOLDER_API_KEY)
    else:
        kwargs["api_key"] = key
    client = genai.Client(**kwargs)
    return Adapter(contract=contract, provider=provider, client=client.aio, settings=settings)
