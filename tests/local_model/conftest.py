"""Fixtures: a fake llama-server install, free ports, per-test state directories."""

from __future__ import annotations

import hashlib
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from xpeval.evals.local_model import Artifacts, LocalModelPaths, LocalModelServer

FAKE_SERVER_SOURCE = Path(__file__).with_name("fake_llama_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_fake_binary(directory: Path) -> Path:
    """An executable `llama-server` that is the fake server script."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / "llama-server"
    binary.write_text(
        f"#!{sys.executable}\n" + FAKE_SERVER_SOURCE.read_text(encoding="utf-8"), encoding="utf-8"
    )
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def write_parts(directory: Path, contents: list[bytes]) -> tuple[Path, ...]:
    directory.mkdir(parents=True, exist_ok=True)
    parts = []
    for n, content in enumerate(contents, start=1):
        part = directory / f"part{n:02d}.bin"
        part.write_bytes(content)
        parts.append(part)
    return tuple(parts)


@pytest.fixture
def fake_artifacts(tmp_path: Path) -> Artifacts:
    contents = [b"GGUF-part-one|", b"part-two|", b"part-three"]
    return Artifacts(
        binary=write_fake_binary(tmp_path / "install" / "bin"),
        model_parts=write_parts(tmp_path / "install" / "parts", contents),
        model_sha256=hashlib.sha256(b"".join(contents)).hexdigest(),
        model_size=sum(len(c) for c in contents),
    )


@pytest.fixture
def paths(tmp_path: Path) -> LocalModelPaths:
    return LocalModelPaths(state_dir=tmp_path / "state", cache_dir=tmp_path / "cache")


@pytest.fixture
def fake_server(paths: LocalModelPaths, fake_artifacts: Artifacts) -> Iterator[LocalModelServer]:
    server = LocalModelServer(paths=paths, port=free_port(), artifacts=fake_artifacts)
    yield server
    if server.status().state in ("running", "starting"):
        server.stop()
