"""Fixtures shared by this repository's tests: the CLI in-process, and the committed replay run
once per test run (the most expensive thing the suite does; every test that needs the whole
replay reads this one run's files, whichever pytest-xdist worker it runs in)."""

from __future__ import annotations

import pytest

from tests._cli import Cli
from tests._once import once_per_run
from tests._replay import CommittedReplay, read_replay, replay_committed


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`cli("run", "--adapters", ...)`: the command in this process, as `Ran(returncode, stdout, stderr)`."""
    return Cli(capsys, monkeypatch)


@pytest.fixture(scope="session")
def committed_replay(tmp_path_factory: pytest.TempPathFactory) -> CommittedReplay:
    """The committed replay, once per test run (tests/_replay.py) whichever pytest-xdist worker
    asks first (tests/_once.py); tests use it with `@pytest.mark.timeout(REPLAY_TIMEOUT)`, since
    the first of them pays for it."""
    return read_replay(once_per_run(tmp_path_factory, "committed-replay", replay_committed))
