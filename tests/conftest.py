"""Fixtures shared by this repository's tests: the CLI in-process, and the committed replay run
once per test run (the most expensive thing the suite does; every test that needs the whole
replay reads this one run's files, whichever pytest-xdist worker it runs in)."""

from __future__ import annotations

import os

import pytest
from filelock import FileLock

from tests._cli import Cli
from tests._replay import RAN_FILE, CommittedReplay, read_replay, replay_committed


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`cli("run", "--adapters", ...)`: the command in this process, as `Ran(returncode, stdout, stderr)`."""
    return Cli(capsys, monkeypatch)


@pytest.fixture(scope="session")
def committed_replay(tmp_path_factory: pytest.TempPathFactory) -> CommittedReplay:
    """The committed replay, once per test run (tests/_replay.py); tests use it with
    `@pytest.mark.timeout(REPLAY_TIMEOUT)`, since the first of them pays for it. Under
    pytest-xdist the first worker to ask runs it, in the folder all workers share (the recipe
    of pytest-xdist's docs, "Making session-scoped fixtures execute only once"); the others wait
    for it and read its files."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return replay_committed(tmp_path_factory.mktemp("committed-replay"))
    shared = tmp_path_factory.getbasetemp().parent / "committed-replay"
    shared.mkdir(exist_ok=True)
    with FileLock(str(shared) + ".lock"):
        if (shared / RAN_FILE).is_file():
            return read_replay(shared)
        return replay_committed(shared)
