"""Running `xpeval schemas` in-process and reading what it printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import without_project_line
from xpeval.evals.cli import main

WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def schemas(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]], str, str]:
    """(exit status, JSON lines, stdout, stderr) of `xpeval schemas --workers 1 ARGS` (stderr
    without its project line)."""
    code = main(["schemas", "--workers", "1", *args])
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines() if line.startswith("{")]
    return code, lines, captured.out, without_project_line(captured.err)


def write(path: Path, content: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path
