"""The committed replay, as the tests share it (`committed_replay` in tests/conftest.py)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from tests._cli import Ran, in_process
from tests._corpus import REPO_ROOT
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.results.rows import ResultRow

REPLAY_TIMEOUT = 900
"""Seconds for a test that uses the shared replay: the first one pays for it (minutes on a loaded
2-core machine)."""


@dataclass(frozen=True)
class CommittedReplay:
    """`xpeval run --schema-report` on this checkout: every committed cassette through every
    adapter, offline, with what it printed and the files it wrote."""

    ran: Ran
    results: Path
    reports: Path
    rows: list[ResultRow]
    """The final row of every episode."""


def replay_committed(out: Path) -> CommittedReplay:
    """Run the main job in this process, from the repository root (where a user runs it: the
    project's `[tool.xpeval]` is found from there), writing into `out`."""
    results, reports = out / "results.jsonl", out / "reports"
    argv = ["run", "--no-progress", "--schema-report", "--results", str(results), "--reports", str(reports)]
    ran = in_process(*argv, cwd=REPO_ROOT)
    (out / RAN_FILE).write_text(json.dumps(asdict(ran)))
    return read_replay(out)


RAN_FILE = "ran.json"
"""What the replay printed and its exit status, beside its files, for the other test workers."""


def read_replay(out: Path) -> CommittedReplay:
    """The replay `replay_committed(out)` made, possibly in another test worker's process."""
    results, reports = out / "results.jsonl", out / "reports"
    ran = Ran(**json.loads((out / RAN_FILE).read_text()))
    rows = list(final_results(ResultsFile.read(results).rows)) if results.exists() else []
    return CommittedReplay(ran, results, reports, rows)
