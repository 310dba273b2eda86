"""The llama-server command line (pure: what to run, not running it)."""

from __future__ import annotations

import os
from pathlib import Path

from evals.local_model import config


def server_command(
    binary: Path,
    gguf: Path,
    chat_template: Path,
    *,
    port: int = config.PORT,
    threads: int | None = None,
    context_tokens: int = config.CONTEXT_TOKENS,
) -> list[str]:
    """Arguments that start llama-server for xpeval.

    Loopback only. One slot: on a small CPU parallel slots only split the cores. Temperature 0
    and a fixed seed by default, so a request without sampling settings answers the same way
    every time (a request's own `temperature` still wins). `--jinja` with the project's
    template is what makes tool calls come back structured.
    """
    return [
        str(binary),
        "--model",
        str(gguf),
        "--host",
        config.HOST,
        "--port",
        str(port),
        "--alias",
        config.MODEL_ALIAS,
        "--jinja",
        "--chat-template-file",
        str(chat_template),
        "--ctx-size",
        str(context_tokens),
        "--parallel",
        "1",
        "--threads",
        str(threads or os.cpu_count() or 2),
        "--temp",
        "0",
        "--seed",
        "0",
    ]
