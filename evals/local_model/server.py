"""Start, stop and inspect a local llama-server: one per model, loopback, the model's fixed
port, our PID only.

`serve` starts the server in its own session (it outlives the command that started it), waits
until `/health` says ready and records the process in the model's own PID file; `stop` signals
only a process that the record proves is the server xpeval started; `status` never changes
anything.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import httpx2

from xpeval.evals.local_model import config, gguf, pidfile
from xpeval.evals.local_model.artifacts import Artifacts, find_artifacts
from xpeval.evals.local_model.command import server_command
from xpeval.evals.local_model.models import PROJECT_TEMPLATE, ServedModel, resolve
from xpeval.evals.local_model.pidfile import ServerRecord
from xpeval.evals.local_model.setup_errors import LocalModelError

State = Literal["running", "starting", "stopped", "foreign"]

_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
"""Servers started by this Python process, kept to reap them when stopped here."""


@dataclass(frozen=True)
class ServerStatus:
    """Where one model's server stands. `foreign`: something xpeval did not start holds the port."""

    model: str
    """The served model's alias."""
    state: State
    port: int
    pid: int | None = None
    detail: str = ""
    startup_seconds: float | None = None

    @property
    def base_url(self) -> str:
        return config.base_url(self.port)

    def line(self) -> str:
        pid = f" pid {self.pid}" if self.pid else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"local model {self.model} {self.state}{pid} on {self.base_url}{detail}"


def chat_template_path(name: str = PROJECT_TEMPLATE) -> Path:
    """A chat template the project ships (a real file: llama-server reads it by path)."""
    return Path(str(resources.files("xpeval.evals.local_model").joinpath(name)))


def served_template(model: ServedModel) -> Path | None:
    """The template file `model` is served with, or None: the template its GGUF carries."""
    return None if model.chat_template is None else chat_template_path(model.chat_template)


def port_is_open(port: int, host: str = config.HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def health(port: int, timeout: float = 2.0) -> int | None:
    """The HTTP status of `/health` (200 ready, 503 loading), or None when nothing answers."""
    try:
        # trust_env=False: a proxy configured for the outside world must not see loopback calls.
        return httpx2.get(f"{config.base_url(port)}/health", timeout=timeout, trust_env=False).status_code
    except httpx2.HTTPError:
        return None


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


class LocalModelServer:
    """The server of one model for one user: its files, its port, and what serves it."""

    def __init__(
        self,
        model: ServedModel | str | None = None,
        *,
        paths: config.LocalModelPaths | None = None,
        port: int | None = None,
        artifacts: Artifacts | None = None,
    ) -> None:
        self.model = resolve(model)
        self.paths = paths or config.LocalModelPaths.default()
        self.port = self.model.port if port is None else port
        """The model's own port unless given (tests use free ports)."""
        self.artifacts = artifacts
        """What to run; found in the installed extra when None."""

    def __repr__(self) -> str:
        return f"LocalModelServer({self.model.alias!r}, port={self.port})"

    @property
    def pid_file(self) -> Path:
        return self.paths.pid_file(self.model)

    @property
    def log_file(self) -> Path:
        return self.paths.log_file(self.model)

    def _status(self, state: State, pid: int | None = None, detail: str = "", **extra: float) -> ServerStatus:
        return ServerStatus(self.model.alias, state, self.port, pid, detail, **extra)

    @property
    def base_url(self) -> str:
        return config.base_url(self.port)

    @property
    def openai_base_url(self) -> str:
        return config.openai_base_url(self.port)

    def _is_ours(self, record: ServerRecord) -> bool:
        """`record` describes this model's server (its alias and port) and its process still
        is that server. A record of another model, copied or misplaced, is never acted on."""
        if record.alias not in (None, self.model.alias) or record.port != self.port:
            return False
        return pidfile.is_our_server(record)

    def status(self) -> ServerStatus:
        """What runs now; changes nothing."""
        record = pidfile.read_record(self.pid_file)
        if record is not None and self._is_ours(record):
            code = health(record.port)
            if code == 200:
                return ServerStatus(self.model.alias, "running", record.port, record.pid)
            return ServerStatus(self.model.alias, "starting", record.port, record.pid, "not ready yet")
        if port_is_open(self.port):
            return self._status("foreign", detail="the port is held by a process xpeval did not start")
        detail = f"stale PID file for pid {record.pid}" if record is not None else ""
        return self._status("stopped", detail=detail)

    def serve(self, timeout: float = 180.0) -> ServerStatus:
        """Start the server unless ours already runs; return once `/health` answers 200."""
        with self._serve_lock():
            return self._serve(timeout)

    @contextmanager
    def _serve_lock(self) -> Iterator[None]:
        # Two `serve` calls at once would both start a server and overwrite each other's record.
        self.paths.state_dir.mkdir(parents=True, exist_ok=True)
        with self.paths.serve_lock(self.model).open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _serve(self, timeout: float) -> ServerStatus:
        current = self.status()
        if current.state == "running":
            return ServerStatus(self.model.alias, "running", current.port, current.pid, "already running")
        if current.state == "starting" and current.pid is not None:
            return self._wait_ready(current.pid, None, time.monotonic(), timeout)
        if current.state == "foreign":
            raise LocalModelError(
                f"port {self.port} is in use by a process xpeval did not start; stop it first"
            )
        artifacts = self.artifacts or find_artifacts(self.model)
        model_file = gguf.assemble(
            artifacts.model_parts,
            self.paths.gguf(self.model),
            sha256=artifacts.model_sha256,
            size=artifacts.model_size,
        )
        command = server_command(
            artifacts.binary,
            model_file,
            served_template(self.model),
            model=self.model,
            port=self.port,
            threads=config.server_threads(),
        )
        began = time.monotonic()
        with self.log_file.open("wb") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _CHILDREN[process.pid] = process
        pidfile.write_record(
            self.pid_file,
            ServerRecord(
                pid=process.pid,
                port=self.port,
                binary=str(artifacts.binary),
                model=str(model_file),
                alias=self.model.alias,
                log=str(self.log_file),
                started_at=time.time(),
                process_start_ticks=pidfile.process_start_ticks(process.pid),
            ),
        )
        return self._wait_ready(process.pid, process, began, timeout)

    def _wait_ready(
        self, pid: int, process: subprocess.Popen[bytes] | None, began: float, timeout: float
    ) -> ServerStatus:
        deadline = began + timeout
        while time.monotonic() < deadline:
            exited = process.poll() is not None if process is not None else not pidfile.is_alive(pid)
            if exited:
                pidfile.remove_record(self.pid_file)
                _CHILDREN.pop(pid, None)
                raise LocalModelError(
                    f"llama-server for {self.model.alias} exited while starting (log {self.log_file}): "
                    f"{_log_tail(self.log_file)}"
                )
            if health(self.port, timeout=1.0) == 200:
                return self._status("running", pid, startup_seconds=time.monotonic() - began)
            time.sleep(0.1)
        self.stop()
        raise LocalModelError(
            f"llama-server for {self.model.alias} was not ready after {timeout:.0f} s and was stopped "
            f"(log {self.log_file})"
        )

    def stop(self, timeout: float = 15.0) -> ServerStatus:
        """Stop the server xpeval started, by its recorded PID; refuse any other process."""
        record = pidfile.read_record(self.pid_file)
        if record is None:
            if port_is_open(self.port):
                raise LocalModelError(
                    f"port {self.port} is held by a process xpeval did not start (no PID file for "
                    f"{self.model.alias}); not stopping it"
                )
            return self._status("stopped", detail="was not running")
        if not pidfile.is_alive(record.pid):
            pidfile.remove_record(self.pid_file)
            self._reap(record.pid)
            return self._status("stopped", detail="was not running (removed its stale PID file)")
        if not self._is_ours(record):
            pidfile.remove_record(self.pid_file)
            raise LocalModelError(
                f"pid {record.pid} is no longer the local model server of {self.model.alias} "
                f"(it runs {pidfile.describe_process(record.pid)}); "
                "not stopping it, removed the stale PID file"
            )
        self._signal_and_wait(record, timeout)
        pidfile.remove_record(self.pid_file)
        return ServerStatus(self.model.alias, "stopped", record.port, record.pid, "stopped")

    def _signal_and_wait(self, record: ServerRecord, timeout: float) -> None:
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            with suppress(ProcessLookupError):
                os.kill(record.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                self._reap(record.pid)
                if not pidfile.is_alive(record.pid):
                    return
                time.sleep(0.05)
        raise LocalModelError(f"pid {record.pid} did not exit after SIGKILL")

    @staticmethod
    def _reap(pid: int) -> None:
        process = _CHILDREN.get(pid)
        if process is not None and process.poll() is not None:
            _CHILDREN.pop(pid, None)
