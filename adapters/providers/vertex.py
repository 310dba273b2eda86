"""Gemini on Vertex AI: the google-genai contract at Vertex's project/location URL shape.

With a project configured it uses Vertex's project path and Google credentials; with only an
API key it uses Vertex express mode. The schema dialect (OpenAPI `parameters`) is set in the
registry.
"""

from __future__ import annotations

import os
from typing import Any

from adapters.adapter import PLACEHOLDER_API_KEY, Adapter, AdapterSettings, EffectiveContract
from adapters.providers.google import DEFAULT_MODEL, http_options


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    from google import genai

    project = settings.project or os.environ.get("GOOGLE_CLOUD_PROJECT")
    location = settings.location or os.environ.get("GOOGLE_CLOUD_LOCATION", "us-central1")
    kwargs: dict[str, Any] = {
        "vertexai": True,
        "http_options": http_options(settings, settings.base_url_or_env("VERTEX_BASE_URL", None)),
    }
    key = settings.key_or_env("VERTEX_API_KEY", "GOOGLE_API_KEY")
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
    live = key != PLACEHOLDER_API_KEY or bool(project and os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"))
    return Adapter(
        contract=contract, client=client.aio, default_model=settings.model or DEFAULT_MODEL, live_ready=live
    )
