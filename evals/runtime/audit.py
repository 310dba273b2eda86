"""The router's audit trail: immutable rows, a bounded in-memory window, a durable JSONL sink.

The log records attempts, not successes, and is append-only: a row is never rewritten,
reordered or dropped (`seq` numbers them without gaps). Memory keeps the last `window` rows;
every row also goes to the sink when one is configured, so nothing is lost when the window rolls.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from xpeval.errors import UserError

AuditOutcome = Literal[
    "ok", "error", "unknown_tool", "invalid_args", "pending", "approved", "denied", "expired"
]

DEFAULT_WINDOW = 10_000


class AuditRow(BaseModel):
    """One attempt on a tool. Frozen: nobody, the router included, can edit a recorded row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int
    """Position in this router's log, from 0, without gaps."""
    tool: str
    request_id: str | None
    """Set for approval-gated calls: pending and its decision share it."""
    outcome: AuditOutcome
    approver: str | None = None
    at_ms: int
    error: str | None = None


class TextSink(Protocol):
    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class AuditSinkError(OSError):
    """The durable sink could not be written: raised, never swallowed, so a gap cannot pass unseen."""


class AuditLog:
    """Append-only rows: the last `window` in memory, all of them in the sink when there is one.

    `sink` is a path (each row is appended and the file closed, so a crash loses nothing
    written) or a text file-like object (written and flushed per row).
    """

    def __init__(self, window: int = DEFAULT_WINDOW, sink: str | Path | TextSink | None = None) -> None:
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"audit window must be a positive integer, got {window!r}")
        self._rows: collections.deque[AuditRow] = collections.deque(maxlen=window)
        self._sink = Path(sink) if isinstance(sink, str) else sink
        self._next_seq = 0

    @property
    def window(self) -> int:
        return self._rows.maxlen or 0

    @property
    def total(self) -> int:
        """Rows ever appended (the in-memory window may hold fewer)."""
        return self._next_seq

    def append(
        self,
        *,
        tool: str,
        outcome: AuditOutcome,
        at_ms: int,
        request_id: str | None = None,
        approver: str | None = None,
        error: str | None = None,
    ) -> AuditRow:
        """Record one attempt at the end of the log; rows already written are never touched."""
        row = AuditRow(
            seq=self._next_seq,
            tool=tool,
            request_id=request_id,
            outcome=outcome,
            approver=approver,
            at_ms=at_ms,
            error=error,
        )
        self._next_seq += 1
        self._rows.append(row)
        if self._sink is not None:
            # ASCII-escaped so that no character inside a value (U+0085, U+2028) can split a line.
            self._write(row.model_dump_json(ensure_ascii=True) + "\n")
        return row

    def _write(self, line: str) -> None:
        try:
            if isinstance(self._sink, Path):
                with self._sink.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            elif self._sink is not None:
                self._sink.write(line)
                self._sink.flush()
        except (OSError, ValueError) as exc:  # ValueError: write to a closed file
            raise AuditSinkError(f"audit sink could not be written: {exc}") from exc

    def rows(self) -> list[AuditRow]:
        """A copy of the in-memory window, oldest first: mutating it changes nothing here."""
        return list(self._rows)


def read_audit_jsonl(path: str | Path) -> list[AuditRow]:
    """Every row of a JSONL audit sink, in order; a malformed line is a UserError naming it."""
    rows = []
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").split("\n")
    except OSError as exc:
        raise UserError(f"{p}: cannot read audit log: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(AuditRow.model_validate_json(line))
        except ValueError as exc:
            raise UserError(f"{p}:{number}: not an audit row: {str(exc).splitlines()[0]}") from exc
    return rows
