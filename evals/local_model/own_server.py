"""The team's own OpenAI-compatible server at a URL as the local target (`--local-model-url`):
the URL checked before anything is sent, and the models the server lists (`GET {url}/models`).

A recording is matched by method, path, query and body (`xpeval.evals.cassettes.matching`), and
its replay is sent to `/v1/...`; a URL with any other path is refused here, so every recording
made through it replays offline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpx2

from xpeval.evals.local_model.local_adapters import SERVER_URL_PATH
from xpeval.evals.local_model.setup_errors import LocalModelError
from xpeval.evals.scrub import scrub_line

MAX_MODELS_BODY = 1_000_000
"""Bytes of a `/models` answer read at most (a list of names)."""


def server_url(url: str) -> str:
    """`url` without a trailing slash, or LocalModelError: an http(s) URL whose path is `/v1`."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LocalModelError(
            f"--local-model-url {url!r}: not an http(s) URL (e.g. http://127.0.0.1:11434/v1)"
        )
    if parts.path.rstrip("/") != SERVER_URL_PATH or parts.query or parts.fragment:
        raise LocalModelError(
            f"--local-model-url {scrub_line(url)}: the URL must end in {SERVER_URL_PATH} (e.g. "
            f"http://127.0.0.1:11434/v1): a recording is replayed at {SERVER_URL_PATH}/..., so another "
            "path could not be replayed"
        )
    return url.strip().rstrip("/")


def served_models(url: str, timeout: float = 10.0) -> list[str]:
    """The model names the server at `url` lists (`GET {url}/models`, OpenAI's list form), or
    LocalModelError in one line when it cannot be reached or does not answer that form."""
    where = scrub_line(f"{url}/models")
    try:
        status, body = _get_bounded(f"{url}/models", timeout)
    except httpx2.HTTPError as exc:
        raise LocalModelError(
            f"--local-model-url: no server answers GET {where} "
            f"({type(exc).__name__}: {scrub_line(str(exc))}); start it, or check the URL"
        ) from exc
    if status != 200:
        raise LocalModelError(f"--local-model-url: GET {where} answered HTTP {status}, not a model list")
    try:
        listed = json.loads(body)["data"] if body is not None else None
        return [str(entry["id"]) for entry in listed]  # type: ignore[union-attr]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise LocalModelError(
            f"--local-model-url: GET {where} is not an OpenAI-compatible model list "
            '({"data": [{"id": ...}]}) of at most 1 MB'
        ) from exc


def _get_bounded(url: str, timeout: float) -> tuple[int, bytes | None]:
    """The status and body of `GET url`; None for a body past `MAX_MODELS_BODY` (not read further)."""
    with httpx2.stream("GET", url, timeout=timeout, trust_env=False) as response:
        body = b""
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_MODELS_BODY:
                return response.status_code, None
        return response.status_code, body


def check_serves(url: str, models: Iterable[str | None]) -> None:
    """LocalModelError naming every wanted model the server does not list (and those it does)."""
    wanted = list(dict.fromkeys(models))
    if None in wanted or not wanted:
        raise LocalModelError(
            "--local-model-url needs the model name the server serves: pass --models NAME "
            "(its GET /models lists them)"
        )
    listed = served_models(url)
    missing = [m for m in wanted if m not in listed]
    if missing:
        raise LocalModelError(
            f"--local-model-url: {scrub_line(url)} does not serve {', '.join(map(str, missing))} "
            f"(it lists: {', '.join(listed[:20]) or 'nothing'}{' ...' if len(listed) > 20 else ''})"
        )
