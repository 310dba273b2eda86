"""serve / status / stop against a fake llama-server: the process management for real."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.local_model.conftest import free_port
from xpeval.evals.local_model import LocalModelError, LocalModelServer
from xpeval.evals.local_model.pidfile import (
    ServerRecord,
    is_alive,
    process_start_ticks,
    read_record,
    write_record,
)
from xpeval.evals.local_model.server import health


def test_serve_returns_once_the_server_is_healthy_and_records_its_pid(fake_server: LocalModelServer) -> None:
    status = fake_server.serve(timeout=30)

    assert status.state == "running"
    assert health(fake_server.port) == 200
    record = read_record(fake_server.pid_file)
    assert record is not None and record.pid == status.pid and record.port == fake_server.port
    assert status.startup_seconds is not None and status.startup_seconds >= 0.3  # waited out the 503s


def test_serving_twice_keeps_the_running_server(fake_server: LocalModelServer) -> None:
    first = fake_server.serve(timeout=30)
    second = fake_server.serve(timeout=30)

    assert second.state == "running" and second.pid == first.pid
    assert second.detail == "already running"


def test_stop_ends_the_server_and_removes_its_pid_file(fake_server: LocalModelServer) -> None:
    pid = fake_server.serve(timeout=30).pid
    assert pid is not None

    status = fake_server.stop()

    assert status.state == "stopped"
    assert not is_alive(pid)
    assert not fake_server.pid_file.exists()
    assert fake_server.status().state == "stopped"


def test_status_when_nothing_runs_is_stopped(fake_server: LocalModelServer) -> None:
    status = fake_server.status()

    assert status.state == "stopped" and status.pid is None


def test_stop_when_nothing_runs_is_a_no_op(fake_server: LocalModelServer) -> None:
    assert fake_server.stop().detail == "was not running"


def test_stop_refuses_a_pid_that_is_not_our_server(fake_server: LocalModelServer) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        write_record(
            fake_server.pid_file,
            ServerRecord(
                pid=other.pid,
                port=fake_server.port,
                binary=str(fake_server.artifacts.binary),  # type: ignore[union-attr]
                model="m.gguf",
                log="server.log",
                started_at=time.time(),
                process_start_ticks=process_start_ticks(other.pid),
            ),
        )

        with pytest.raises(LocalModelError, match=f"pid {other.pid} is no longer the local model server"):
            fake_server.stop()

        assert other.poll() is None  # never signalled
        assert not fake_server.pid_file.exists()
    finally:
        other.kill()
        other.wait()


def test_stop_refuses_a_reused_pid_even_with_a_matching_command_line(fake_server: LocalModelServer) -> None:
    pid = fake_server.serve(timeout=30).pid
    assert pid is not None
    record = read_record(fake_server.pid_file)
    assert record is not None
    # Same PID and command line, but started at another time: the PID was reused.
    write_record(fake_server.pid_file, record.model_copy(update={"process_start_ticks": 1}))

    with pytest.raises(LocalModelError, match="not stopping it"):
        fake_server.stop()

    assert is_alive(pid)
    write_record(fake_server.pid_file, record)  # let the fixture stop it


def test_a_port_held_by_another_process_is_reported_and_never_taken_over(
    fake_server: LocalModelServer,
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", fake_server.port))
        listener.listen()

        assert fake_server.status().state == "foreign"
        with pytest.raises(LocalModelError, match="in use by a process xpeval did not start"):
            fake_server.serve(timeout=5)
        with pytest.raises(LocalModelError, match="not stopping it"):
            fake_server.stop()


def test_a_server_that_dies_while_starting_fails_with_its_log(
    fake_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "1")

    with pytest.raises(LocalModelError, match=r"exited while starting.*failed to load model"):
        fake_server.serve(timeout=30)

    assert not fake_server.pid_file.exists()


def test_a_server_never_ready_is_stopped_at_the_timeout(
    fake_server: LocalModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_LOAD_SECONDS", "60")

    with pytest.raises(LocalModelError, match="not ready after 1 s and was stopped"):
        fake_server.serve(timeout=1)

    assert fake_server.status().state == "stopped"
    assert not fake_server.pid_file.exists()


def test_servers_with_their_own_state_do_not_see_each_other(
    fake_server: LocalModelServer, tmp_path: Path
) -> None:
    fake_server.serve(timeout=30)
    other = LocalModelServer(
        paths=type(fake_server.paths)(state_dir=tmp_path / "other", cache_dir=tmp_path / "other-cache"),
        port=free_port(),
        artifacts=fake_server.artifacts,
    )

    assert other.status().state == "stopped"
