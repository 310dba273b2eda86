"""Any OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenRouter, Groq): openai-chat at any base URL.

Without a configured base URL it points at the local model server (`xpeval local-model serve`).
"""

from __future__ import annotations

import os

from adapters.adapter import Adapter, AdapterSettings, EffectiveContract
from adapters.providers._http import sdk_client_kwargs

LOCAL_BASE_URL = "http://127.0.0.1:18181/v1"
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct"


def create(contract: EffectiveContract, settings: AdapterSettings) -> Adapter:
    import openai as openai_sdk  # lazily: listing adapters must not pay for SDK imports

    client = openai_sdk.AsyncOpenAI(
        api_key=settings.key_or_env("OPENAI_COMPATIBLE_API_KEY"),
        base_url=settings.base_url_or_env("OPENAI_COMPATIBLE_BASE_URL", LOCAL_BASE_URL),
        **sdk_client_kwargs(settings),
    )
    # A local or self-hosted server needs no key: a configured base URL is what makes it real.
    configured = bool(settings.base_url or os.environ.get("OPENAI_COMPATIBLE_BASE_URL"))
    return Adapter(
        contract=contract, client=client, default_model=settings.model or DEFAULT_MODEL, live_ready=configured
    )
