"""Adapters pointed at a local server: which ones it can serve, and building them.

The server speaks three wires at the URL shapes of their direct APIs: OpenAI Chat and
Responses under `/v1`, Anthropic Messages at the root (the SDK adds `/v1/messages`). An
adapter can point at it when its wire is one of those and its provider module keeps the base
URL it is given (Azure's adapters rebuild it into their own paths, and Gemini's wire has no
local server). That is read from the registry and the adapters themselves: no second list.
Every served model speaks the same wires; only the port differs.

The team's own OpenAI-compatible server (llama-server, Ollama, vLLM) at a URL is the other
local target (`--local-model-url`): its adapters send to that URL as they would to a provider,
without this project's chat template, its parser of calls written as text or its request
shaping, since those belong to the bundled servers (docs/local-model.md, "Your own server").
"""

from __future__ import annotations

from xpeval.adapters.adapter import Adapter, AdapterSettings
from xpeval.adapters.contract import WireName
from xpeval.adapters.registry import adapter_ids, create_adapter, effective_contract
from xpeval.evals.local_model import config
from xpeval.evals.local_model.models import DEFAULT_MODEL, ServedModel, find_model, resolve
from xpeval.evals.local_model.request_shaping import prepare_for_local_server
from xpeval.evals.local_model.setup_errors import LocalModelError
from xpeval.evals.local_model.text_calls import read_text_calls

SERVED_WIRES: tuple[WireName, ...] = ("openai-chat", "openai-responses", "anthropic-messages")


def local_base_url(wire: WireName, port: int = DEFAULT_MODEL.port) -> str:
    """The base URL an SDK of `wire` needs to reach the local server on `port`."""
    if wire == "anthropic-messages":
        return config.base_url(port)
    if wire in SERVED_WIRES:
        return config.openai_base_url(port)
    raise LocalModelError(f"the local model server does not speak the {wire} wire")


def _client_base_url(adapter: Adapter) -> str:
    return str(getattr(adapter.client, "base_url", "")).rstrip("/")


def served_model_for(model: ServedModel | str | None, requested: str | None) -> ServedModel:
    """Which served model answers: `model` when given, else the one the request names (its
    alias as the model name, so a recorded episode goes back to the model that answered it),
    else the default model."""
    if model is None:
        return find_model(requested) or DEFAULT_MODEL
    chosen = resolve(model)
    named = find_model(requested)
    if named is not None and named != chosen:
        raise LocalModelError(f"the request names model {requested!r} but is sent to {chosen.alias}")
    return chosen


def create_local_adapter(
    adapter_id: str,
    settings: AdapterSettings | None = None,
    *,
    model: ServedModel | str | None = None,
    port: int | None = None,
) -> Adapter:
    """Adapter `adapter_id` pointed at the local server of `model` (see `served_model_for`), on
    that model's port unless `port` is given; LocalModelError says why it cannot be.

    The request's model name is the settings' own, else the served model's alias.
    """
    base = settings or AdapterSettings()
    served = served_model_for(model, base.model)
    wire = effective_contract(adapter_id).wire
    url = local_base_url(wire, served.port if port is None else port)
    adapter = create_adapter(
        adapter_id, base.model_copy(update={"base_url": url, "model": base.model or served.alias})
    )
    if _client_base_url(adapter) != url:
        raise LocalModelError(
            f"{adapter_id} cannot point at the local model: it sends to {_client_base_url(adapter)} "
            f"instead of {url}"
        )
    adapter.request_hook = prepare_for_local_server
    if served.chat_template is not None:
        # The project's template comes with the project's parser of calls written as text; a
        # model served with its GGUF's own template is read as llama-server alone reads it.
        adapter.reply_hook = read_text_calls
    return adapter


def local_adapter_ids(port: int | None = None) -> list[str]:
    """Every registered adapter that can point at a local server (the same for every model)."""
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


SERVER_URL_WIRES: tuple[WireName, ...] = ("openai-chat",)
"""The wires offered against a server at a URL: OpenAI Chat, the one every OpenAI-compatible
server (llama-server, Ollama, vLLM) speaks."""

SERVER_URL_PATH = "/v1"
"""The path a server URL must have: a recording is matched by its path, and a replay sends to
`/v1/...` (docs/local-model.md, "Your own server")."""

REPLAY_SERVER_URL = "http://127.0.0.1" + SERVER_URL_PATH
"""Where a replayed own-server recording's adapter points: never contacted (the cassette
answers), only its path matters."""


def is_bundled_model(model: str | None) -> bool:
    """Whether `model` is one the bundled servers serve (else a model of the team's own server)."""
    return model is None or find_model(model) is not None


def create_server_adapter(adapter_id: str, url: str, settings: AdapterSettings) -> Adapter:
    """Adapter `adapter_id` sending to the OpenAI-compatible server at `url` as-is (the model
    name is the settings' own: the one the server serves); LocalModelError says why it cannot."""
    wire = effective_contract(adapter_id).wire
    if wire not in SERVER_URL_WIRES:
        raise LocalModelError(
            f"{adapter_id} speaks {wire}: a server at a URL is offered OpenAI Chat adapters only "
            f"({', '.join(server_url_adapter_ids())}), the wire every OpenAI-compatible server speaks"
        )
    if not settings.model:
        raise LocalModelError("a server at a URL needs the model name it serves (--models NAME)")
    url = url.rstrip("/")
    adapter = create_adapter(adapter_id, settings.model_copy(update={"base_url": url}))
    if _client_base_url(adapter) != url:
        raise LocalModelError(
            f"{adapter_id} cannot point at {url}: it sends to {_client_base_url(adapter)} instead"
        )
    return adapter


def server_url_adapter_ids() -> list[str]:
    """Every adapter a server at a URL can be played through (OpenAI Chat, a base URL kept)."""
    return [a for a in local_adapter_ids() if effective_contract(a).wire in SERVER_URL_WIRES]
