"""The PID file: what it records and how a process is proven to be ours."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from xpeval.evals.local_model.pidfile import (
    ServerRecord,
    is_our_server,
    process_start_ticks,
    read_record,
    write_record,
)


def _record(pid: int, **changes: object) -> ServerRecord:
    fields: dict[str, object] = {
        "pid": pid,
        "port": 18181,
        "binary": "/opt/llama-server",
        "model": "/m.gguf",
        "log": "/l.log",
        "started_at": time.time(),
        "process_start_ticks": process_start_ticks(pid),
    }
    fields.update(changes)
    return ServerRecord.model_validate(fields)


def test_a_written_record_reads_back(tmp_path: Path) -> None:
    record = _record(os.getpid())
    write_record(tmp_path / "server.json", record)

    assert read_record(tmp_path / "server.json") == record


def test_a_missing_or_corrupt_pid_file_reads_as_no_server(tmp_path: Path) -> None:
    (tmp_path / "corrupt.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "wrong.json").write_text('{"pid": "x"}', encoding="utf-8")

    assert read_record(tmp_path / "absent.json") is None
    assert read_record(tmp_path / "corrupt.json") is None
    assert read_record(tmp_path / "wrong.json") is None


def test_a_process_is_ours_only_with_the_recorded_binary_port_and_start_time(tmp_path: Path) -> None:
    script = tmp_path / "llama-server"
    script.write_text("import time; time.sleep(30)\n", encoding="utf-8")
    process = subprocess.Popen([sys.executable, str(script), "--port", "18181"])
    try:
        deadline = time.monotonic() + 5
        while (
            not (Path(f"/proc/{process.pid}/cmdline").read_bytes().count(b"--port"))
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        ours = _record(process.pid, binary=str(script))

        assert is_our_server(ours)
        assert not is_our_server(ours.model_copy(update={"port": 18182}))
        assert not is_our_server(ours.model_copy(update={"binary": "/elsewhere/llama-server"}))
        assert not is_our_server(ours.model_copy(update={"process_start_ticks": 1}))
    finally:
        process.kill()
        process.wait()

    assert not is_our_server(ours)


def test_init_and_unknown_pids_are_never_ours() -> None:
    assert not is_our_server(_record(1, process_start_ticks=process_start_ticks(1)))
    assert not is_our_server(_record(2**22 + 12345, process_start_ticks=None))
