"""Fixtures shared by this repository's tests: the CLI in-process, and the committed replay run
once per session (the most expensive thing the suite does; every test that needs the whole
replay reads this one run's files)."""

from __future__ import annotations

import pytest

from tests._cli import Cli
from tests._replay import CommittedReplay, replay_committed


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`cli("run", "--adapters", ...)`: the command in this process, as `Ran(returncode, stdout, stderr)`."""
    return Cli(capsys, monkeypatch)


@pytest.fixture(scope="session")
def committed_replay(tmp_path_factory: pytest.TempPathFactory) -> CommittedReplay:
    """The committed replay, once per session (tests/_replay.py); tests use it with
    `@pytest.mark.timeout(REPLAY_TIMEOUT)`, since the first of them pays for it."""
    return replay_committed(tmp_path_factory.mktemp("committed-replay"))
