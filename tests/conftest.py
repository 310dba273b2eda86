"""Fixtures shared by this repository's tests: the CLI in-process, and the committed replay run
once per test run (the most expensive thing the suite does; every test that needs the whole
replay reads this one run's files, whichever pytest-xdist worker it runs in)."""

from __future__ import annotations

import compileall
import sys

import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from tests._once import once_per_run
from tests._replay import CommittedReplay, read_replay, replay_committed
from tests.conformance._host import CONFORMANCE

SHARED = ("committed_replay", "wheel", "venv_python")
"""Fixtures made once per test run and shared by every pytest-xdist worker (tests/_once.py): a
worker asking for one while another makes it waits, idle, on the file lock."""


COMPILED = ("xpeval", "adapters", "evals")
"""The package's folders (adapters/ and evals/ are linked into xpeval/, and compileall does not
follow links)."""


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the checkout's package once, before any test or pytest-xdist worker starts,
    where the environment forbids Python to write what it compiles (PYTHONDONTWRITEBYTECODE, set
    on this project's CI machine): the suite starts a few hundred fresh interpreters (xpeval,
    pytest and plugin probes in subprocesses), and each compiled xpeval's modules again from
    source (0.3-0.4 s of CPU for all of them, measured 2026-12-07). An editable install is not
    compiled by pip, as installed packages are; the files are the `__pycache__` a first import
    writes anywhere else (ignored by git), and Python checks them against their sources."""
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        for folder in COMPILED:
            compileall.compile_dir(REPO_ROOT / folder, quiet=2)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run order for `-n auto`: pytest-xdist hands tests out in this order (round robin at first,
    then to whichever worker runs short), so the first test using each shared fixture goes first
    (its work starts at once, one worker each), then the other `slow` tests (nothing long left
    for the end, with one worker idle), then the other tests of the shared work (made by then),
    then the shipped conformance suite (unmarked, since it runs in other projects, and its
    per-adapter replays are among the longest tests: collected last, they were the tail), then
    the rest. A stable sort: the same order on every worker, as pytest-xdist requires."""
    first: set[str] = set()

    def rank(item: pytest.Item) -> int:
        shared = [name for name in getattr(item, "fixturenames", ()) if name in SHARED]
        if set(shared) - first:
            first.update(shared)
            return 0
        if shared:
            return 2
        if item.get_closest_marker("slow") is not None:
            return 1
        return 3 if item.path.is_relative_to(CONFORMANCE) else 4

    ranks = {item.nodeid: rank(item) for item in items}  # in collection order: "first" is first
    items.sort(key=lambda item: ranks[item.nodeid])


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


DOC_COMMAND_TEST = "tests/docs/test_doc_commands.py::test_a_documented_command_exits_as_its_document_says"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many of the documents' commands ran and how many a marker in their document skipped
    (tests/docs/test_doc_commands.py): a skipped command is one the test cannot vouch for."""
    counts = {
        outcome: sum(
            1
            for report in terminalreporter.stats.get(outcome, [])
            if getattr(report, "when", "call") in ("call", "setup")
            and str(getattr(report, "nodeid", "")).startswith(DOC_COMMAND_TEST)
        )
        for outcome in ("passed", "failed", "skipped")
    }
    if any(counts.values()):
        terminalreporter.write_line(
            f"documented commands: {counts['passed']} ran as their documents say, {counts['failed']} did "
            f"not, {counts['skipped']} skipped by a marker in their document (each with its reason "
            "in the SKIPPED lines)"
        )
