"""Cassette modes for pytest, the same three as `xpeval run --mode` (in the spirit of
pytest-recording's `--record-mode`).

    pytest --cassette-mode replay|record|live [--cassette-dir DIR]

`replay` (the default; or `XPEVAL_CASSETTE_MODE`) never reaches the network. A test opens
episodes through the `cassette_episode` fixture and hands `episode.transport` to its adapter;
when the test ends, every replay problem (a missing cassette, an unmatched request with its
diff, an unplayed interaction) fails it, naming the cassette and the command that records it.
In `record` mode an episode is saved only when its test passed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest

from evals.cassettes.episode import Episode, open_episode
from evals.cassettes.meta import Mode, Source
from evals.cassettes.store import CassetteStore

MODE_VARIABLE = "XPEVAL_CASSETTE_MODE"

OpenEpisode = Callable[..., Episode]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xpeval cassettes")
    group.addoption("--cassette-mode", choices=[mode.value for mode in Mode], default=None,
                    help=f"replay (default, network blocked), record or live; also ${MODE_VARIABLE}")
    group.addoption("--cassette-dir", default="cassettes", help="cassette folder (default: cassettes)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[_PASSED] = report.passed


_PASSED = pytest.StashKey[bool]()


@pytest.fixture
def cassette_mode(request: pytest.FixtureRequest) -> Mode:
    chosen = request.config.getoption("--cassette-mode") or os.environ.get(MODE_VARIABLE) or Mode.REPLAY.value
    try:
        return Mode(chosen)
    except ValueError:
        raise pytest.UsageError(f"{MODE_VARIABLE}={chosen!r}: expected replay, record or live") from None


@pytest.fixture
def cassette_store(request: pytest.FixtureRequest) -> CassetteStore:
    return CassetteStore(Path(request.config.getoption("--cassette-dir")))


@pytest.fixture
def cassette_episode(
    request: pytest.FixtureRequest, cassette_mode: Mode, cassette_store: CassetteStore
) -> Generator[OpenEpisode, None, None]:
    """`cassette_episode(adapter_id, case_id, source=..., model=...)` -> an Episode in the chosen mode."""
    opened: list[Episode] = []

    def open_one(
        adapter_id: str,
        case_id: str,
        *,
        model: str,
        source: Source = "live",
        secrets: Sequence[str] = (),
        upstream: httpx2.AsyncBaseTransport | None = None,
    ) -> Episode:
        episode = open_episode(cassette_store, adapter_id, case_id, cassette_mode, source=source, model=model,
                               secrets=secrets, upstream=upstream)
        opened.append(episode)
        return episode

    yield open_one
    passed = request.node.stash.get(_PASSED, False)
    problems = [problem for episode in opened for problem in episode.finish(succeeded=passed)]
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
