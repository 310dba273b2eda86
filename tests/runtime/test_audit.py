"""Audit retention: immutable rows, a bounded in-memory window, a durable JSONL sink."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pydantic import ValidationError

from xpeval.errors import UserError
from xpeval.evals.runtime import AuditRow, AuditSinkError, ToolRouter, read_audit_jsonl


def busy_router(sink: Path | io.StringIO, window: int) -> ToolRouter:
    router = ToolRouter(audit_window=window, audit_sink=sink)
    router.register("t", lambda args: "ok")
    for at in range(25):
        router.call("t" if at % 2 else "missing", {}, now_ms=at)
    return router


def test_memory_keeps_only_the_window_while_a_path_sink_keeps_every_row(tmp_path: Path) -> None:
    sink = tmp_path / "audit.jsonl"
    router = busy_router(sink, window=4)
    assert [r.seq for r in router.audit_log()] == [21, 22, 23, 24]
    rows = read_audit_jsonl(sink)
    assert [r.seq for r in rows] == list(range(25))
    assert [r.at_ms for r in rows] == list(range(25))
    assert rows[-4:] == router.audit_log()
    assert router.audit_total == 25


def test_a_file_like_sink_gets_one_json_line_per_row() -> None:
    sink = io.StringIO()
    busy_router(sink, window=2)
    lines = sink.getvalue().split("\n")
    assert lines[-1] == "" and len(lines[:-1]) == 25
    assert AuditRow.model_validate_json(lines[0]).outcome == "unknown_tool"


def test_a_tool_name_with_unicode_line_separators_stays_on_one_line(tmp_path: Path) -> None:
    sink = tmp_path / "audit.jsonl"
    router = ToolRouter(audit_sink=sink)
    name = "a\u2028b\x85c\rd"
    router.call(name, {}, now_ms=1)
    assert len(sink.read_bytes().splitlines()) == 1
    assert read_audit_jsonl(sink)[0].tool == name


def test_rows_cannot_be_edited() -> None:
    router = ToolRouter()
    router.call("missing", {}, now_ms=1)
    row = router.audit_log()[0]
    with pytest.raises(ValidationError):
        row.outcome = "ok"
    assert router.audit_log()[0].outcome == "unknown_tool"


def test_a_sink_that_cannot_be_written_raises_instead_of_losing_rows_silently() -> None:
    sink = io.StringIO()
    router = ToolRouter(audit_sink=sink)
    sink.close()
    with pytest.raises(AuditSinkError, match="audit sink could not be written"):
        router.call("missing", {}, now_ms=1)


def test_reading_a_corrupt_audit_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"seq": 0}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"audit.jsonl:1: not an audit row"):
        read_audit_jsonl(path)


def test_a_non_positive_window_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        ToolRouter(audit_window=0)
