"""The llama-server command line (pure: what to run, not running it)."""

from __future__ import annotations

import os
from pathlib import Path

from xpeval.evals.local_model import config
from xpeval.evals.local_model.models import DEFAULT_MODEL, ServedModel


def server_command(
    binary: Path,
    gguf: Path,
    chat_template: Path | None,
    *,
    model: ServedModel = DEFAULT_MODEL,
    port: int | None = None,
    threads: int | None = None,
    context_tokens: int = config.CONTEXT_TOKENS,
) -> list[str]:
    """Arguments that start llama-server for xpeval, serving `model` on its port (or `port`).

    Loopback only. One slot: on a small CPU parallel slots only split the cores. Temperature 0
    and a fixed seed by default, so a request without sampling settings answers the same way
    every time (a request's own `temperature` still wins). `--jinja` with the project's
    template is what makes tool calls come back structured. No flag is needed for parallel
    calls: llama-server allows them by default when the template renders a second call of an
    assistant turn, as the project's template does (a request may still send
    `parallel_tool_calls`). A `chat_template` of None leaves the server the template the GGUF
    carries, and its tool-call parser for that template.
    """
    template = [] if chat_template is None else ["--chat-template-file", str(chat_template)]
    return [
        str(binary),
        "--model",
        str(gguf),
        "--host",
        config.HOST,
        "--port",
        str(model.port if port is None else port),
        "--alias",
        model.alias,
        "--jinja",
        *template,
        "--ctx-size",
        str(context_tokens),
        "--n-predict",
        str(config.REPLY_TOKENS),
        "--parallel",
        "1",
        "--threads",
        str(threads or os.cpu_count() or 2),
        "--temp",
        "0",
        "--seed",
        "0",
    ]
