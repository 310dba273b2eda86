"""Adapters pointed at the local server: which ones it can serve, and building them.

The server speaks three wires at the URL shapes of their direct APIs: OpenAI Chat and
Responses under `/v1`, Anthropic Messages at the root (the SDK adds `/v1/messages`). An
adapter can point at it when its wire is one of those and its provider module keeps the base
URL it is given (Azure's adapters rebuild it into their own paths, and Gemini's wire has no
local server). That is read from the registry and the adapters themselves: no second list.
"""

from __future__ import annotations

from adapters.adapter import Adapter, AdapterSettings
from adapters.contract import WireName
from adapters.registry import adapter_ids, create_adapter, effective_contract
from evals.local_model import config
from evals.local_model.errors import LocalModelError
from evals.local_model.requests import prepare_for_local_server

SERVED_WIRES: tuple[WireName, ...] = ("openai-chat", "openai-responses", "anthropic-messages")


def local_base_url(wire: WireName, port: int = config.PORT) -> str:
    """The base URL an SDK of `wire` needs to reach the local server."""
    if wire == "anthropic-messages":
        return config.base_url(port)
    if wire in SERVED_WIRES:
        return config.openai_base_url(port)
    raise LocalModelError(f"the local model server does not speak the {wire} wire")


def _client_base_url(adapter: Adapter) -> str:
    return str(getattr(adapter.client, "base_url", "")).rstrip("/")


def create_local_adapter(
    adapter_id: str, settings: AdapterSettings | None = None, *, port: int = config.PORT
) -> Adapter:
    """Adapter `adapter_id` pointed at the local server, or LocalModelError saying why it cannot be."""
    wire = effective_contract(adapter_id).wire
    url = local_base_url(wire, port)
    base = settings or AdapterSettings()
    adapter = create_adapter(
        adapter_id, base.model_copy(update={"base_url": url, "model": base.model or config.MODEL_ALIAS})
    )
    if _client_base_url(adapter) != url:
        raise LocalModelError(
            f"{adapter_id} cannot point at the local model: it sends to {_client_base_url(adapter)} "
            f"instead of {url}"
        )
    adapter.request_hook = prepare_for_local_server
    return adapter


def local_adapter_ids(port: int = config.PORT) -> list[str]:
    """Every registered adapter that can point at the local server."""
    served = []
    for adapter_id in adapter_ids():
        if effective_contract(adapter_id).wire not in SERVED_WIRES:
            continue
        try:
            create_local_adapter(adapter_id, port=port)
        except LocalModelError:
            continue
        served.append(adapter_id)
    return served
