"""Server-sent events as recorded: CRLF or LF lines, comments, multi-line `data:`."""

from __future__ import annotations

import json
from typing import Any


def events(body: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) of every event in an SSE body."""
    found: list[tuple[str | None, str]] = []
    event: str | None = None
    data: list[str] = []
    for line in body.decode("utf-8", "replace").replace("\r\n", "\n").split("\n"):
        if not line.strip():
            if data:
                found.append((event, "\n".join(data)))
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        found.append((event, "\n".join(data)))
    return found


def json_events(body: bytes) -> list[tuple[str | None, Any]] | None:
    """Every event whose data is JSON, parsed; None when the body has no such event."""
    out: list[tuple[str | None, Any]] = []
    for event, data in events(body):
        try:
            out.append((event, json.loads(data)))
        except ValueError:
            continue
    return out or None


def frame(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{head}data: {payload}\n\n".encode()
