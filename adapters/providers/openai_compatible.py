"""Any OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenRouter, Groq): openai-chat at any base URL.

Without a configured base URL it points at the local model server (`xpeval local-model serve`).
A local or self-hosted server needs no key: a configured base URL is what makes it real.
"""

from __future__ import annotations

from xpeval.adapters.providers._spec import Provider
from xpeval.adapters.providers.openai import OPENAI_LOGGERS

LOCAL_BASE_URL = "http://127.0.0.1:18181/v1"

OPENAI_COMPATIBLE = Provider(
    name="openai-compatible",
    default_model="qwen2.5-coder-1.5b-instruct",
    key_vars=("OPENAI_COMPATIBLE_API_KEY",),
    base_url_var="OPENAI_COMPATIBLE_BASE_URL",
    default_base_url=LOCAL_BASE_URL,
    sdk_loggers=OPENAI_LOGGERS,
    ready_when=(("OPENAI_COMPATIBLE_BASE_URL",),),
)
