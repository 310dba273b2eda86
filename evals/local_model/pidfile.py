"""The PID file of the server xpeval started, and the test that a PID is still that server.

A PID alone is not an identity: after the server dies the number can be reused by anything.
The record therefore keeps the process's start time (from /proc) and its command line's
binary and port (and the served model's alias); a process is ours only when all of them still
match. Nothing else is ever signalled.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from pydantic import BaseModel, ValidationError


class ServerRecord(BaseModel):
    """What `serve` wrote about the process it started."""

    pid: int
    port: int
    binary: str
    model: str
    """The model file it serves."""
    alias: str | None = None
    """The served model's alias (`--alias`); None in records written before there were several."""
    log: str
    started_at: float
    """Wall-clock time of the start (seconds since the epoch)."""
    process_start_ticks: int | None
    """The kernel's start time of the process (clock ticks since boot): tells a reused PID."""


def read_record(path: Path) -> ServerRecord | None:
    """The record at `path`; None when there is none or it is unreadable (never ours then)."""
    try:
        return ServerRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None


def write_record(path: Path, record: ServerRecord) -> None:
    """Write atomically, so a concurrent `status` never reads half a record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    os.replace(partial, path)


def remove_record(path: Path) -> None:
    path.unlink(missing_ok=True)


def _proc_stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself contain spaces or ')'.
    return raw[raw.rfind(")") + 2 :].split()


def process_start_ticks(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), or None if it does not exist."""
    fields = _proc_stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    return int(fields[19])


def is_alive(pid: int) -> bool:
    """Process `pid` exists and has not exited (a zombie awaiting its parent counts as exited)."""
    fields = _proc_stat_fields(pid)
    if fields is not None:
        return fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_cmdline(pid: int) -> list[str] | None:
    """The argument vector of process `pid`, or None when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [arg.decode("utf-8", "replace") for arg in raw.split(b"\0") if arg]


def describe_process(pid: int) -> str:
    cmdline = process_cmdline(pid)
    return " ".join(cmdline)[:200] if cmdline else "an unknown command"


def is_our_server(record: ServerRecord) -> bool:
    """The recorded PID is still the server xpeval started: same start time, binary, port and
    (when recorded) model alias."""
    if record.pid <= 1 or not is_alive(record.pid):
        return False
    if record.process_start_ticks is None or process_start_ticks(record.pid) != record.process_start_ticks:
        return False
    cmdline = process_cmdline(record.pid)
    if not cmdline or record.binary not in cmdline:
        return False
    pairs = list(itertools.pairwise(cmdline))
    if record.alias is not None and ("--alias", record.alias) not in pairs:
        return False
    return ("--port", str(record.port)) in pairs
