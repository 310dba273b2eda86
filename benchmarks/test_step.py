"""The loop everyone waits on: `.ci/run`'s test step on a clean clone, five times in a row.

A clean clone of this checkout's HEAD (`git clone`, into a temporary folder, beside a link to
the data folder that sits beside this checkout when it has one, as CI has it), set up once as
`.ci/run` sets it up (every line of `.ci/run` before its test step: the venv, the dev and bfcl
extras, bfcl-eval, `.ci/check`), then `.ci/run`'s test step (its lines after `echo "== tests"`)
N times in a row. Before each run the clone goes back to the state the setup left (files the
previous run wrote in it are removed: pytest's and mypy's caches, compiled modules), so each run
is a clean clone's first.

Target (issue 37, "The loop"): at most 300 s of wall time on every run, on 2 cores. Wall time, not
CPU: it is what a developer waits for, so it needs a quiet machine; each run's CPU (user + sys of
the step and its children) and the load average are printed beside it to tell a slow step from a
busy machine.

Measured 2026-12-07 on cf07e2d, a quiet 2-core machine (load 1.4-2.0 at each run's start),
4,360 passed, 143 skipped each time: 476 s, 480 s, 491 s, 494 s, 501 s wall (814 s, 822 s,
839 s, 850 s, 860 s of CPU); the setup as `.ci/run` took 113 s. The target is missed on all
five: at the same use of both cores, 300 s needs about a third less CPU (docs/benchmarks.md,
"The loop", says where it goes).

Run: `python benchmarks/test_step.py [--runs N] [--keep]`; exit status 1 when any run misses the
target or fails.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 300.0
TEST_STEP_MARK = 'echo "== tests"'
"""The line of `.ci/run` after which its test step begins."""


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def split_ci_run(script: str) -> tuple[str, str]:
    """(the setup, the test step) of `.ci/run`'s text, cut at its `echo "== tests"` line."""
    head, mark, step = script.partition(TEST_STEP_MARK)
    if not mark or not step.strip():
        raise SystemExit(f".ci/run has no line {TEST_STEP_MARK!r} followed by the test step")
    prologue = "\n".join(
        line for line in head.splitlines() if line.startswith(("set ", 'cd "$(dirname "$0")'))
    )
    return head, f"{prologue}\n{step}"


def clean_clone(into: Path) -> Path:
    """A clone of this checkout's HEAD in `into/xpeval`, with `into/shared` linking to the shared
    data when this checkout has it beside it (the tests read that folder beside the repository)."""
    head = _git("rev-parse", "HEAD", cwd=REPO).strip()
    clone = into / "xpeval"
    _git("clone", "--quiet", "--no-hardlinks", str(REPO), str(clone), cwd=into)
    _git("checkout", "--quiet", "--detach", head, cwd=clone)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (into / "shared").symlink_to(shared.resolve())
    return clone


def _untracked(clone: Path) -> set[str]:
    """Every file git does not track in `clone` (ignored ones included), but the venv's."""
    listed = _git("ls-files", "--others", "-z", "--exclude=/.venv/", cwd=clone)
    return {name for name in listed.split("\0") if name}


def reset(clone: Path, kept: set[str]) -> int:
    """Remove what a run wrote in `clone` since the setup (files not in `kept`, then the folders
    they leave empty); how many files."""
    removed = sorted(_untracked(clone) - kept)
    for name in removed:
        (clone / name).unlink(missing_ok=True)
    for name in removed:
        for parent in (clone / name).parents:
            # an earlier name's walk may have removed this folder already
            if parent == clone or not parent.is_dir() or any(parent.iterdir()):
                break
            parent.rmdir()
    return len(removed)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_step(step: str, clone: Path) -> tuple[int, float, float]:
    """(exit status, wall seconds, CPU seconds) of the test step run in `clone`, its output to
    this process's."""
    cpu, start = _children_cpu(), time.perf_counter()
    # $0 is .ci/run, so the step's `cd "$(dirname "$0")/.."` lands in the clone, as in .ci/run
    done = subprocess.run(["bash", "-c", step, str(clone / ".ci" / "run")], cwd=clone)
    return done.returncode, time.perf_counter() - start, _children_cpu() - cpu


def main(runs: int, keep: bool) -> int:
    setup, step = split_ci_run((REPO / ".ci" / "run").read_text(encoding="utf-8"))
    folder = Path(tempfile.mkdtemp(prefix="xpeval-test-step-"))
    try:
        clone = clean_clone(folder)
        print(
            f"clean clone of {_git('rev-parse', '--short', 'HEAD', cwd=clone).strip()} in {clone}", flush=True
        )
        started = time.perf_counter()
        subprocess.run(["bash", "-c", setup, str(clone / ".ci" / "run")], cwd=clone, check=True)
        print(f"setup as .ci/run: {time.perf_counter() - started:.0f} s", flush=True)
        kept = _untracked(clone)
        results: list[tuple[int, float, float, float]] = []
        for number in range(1, runs + 1):
            removed = reset(clone, kept)
            load = os.getloadavg()[0]
            print(
                f"== run {number}/{runs} (load {load:.1f}; {removed} files of the last run removed)",
                flush=True,
            )
            code, wall, cpu = run_step(step, clone)
            results.append((code, wall, cpu, load))
            print(f"== run {number}: exit {code}, {wall:.0f} s wall, {cpu:.0f} s CPU", flush=True)
    finally:
        if keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    missed = False
    print(
        f"\n.ci/run's test step on a clean clone, {runs} runs in a row "
        f"(target <= {TARGET_SECONDS:.0f} s each):"
    )
    for number, (code, wall, cpu, load) in enumerate(results, start=1):
        ok = code == 0 and wall <= TARGET_SECONDS
        verdict = "ok" if ok else (f"FAILED (exit {code})" if code else "MISSED")
        print(f"  run {number}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, load {load:4.1f} at start: {verdict}")
        missed = missed or not ok
    return 1 if missed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of the test step (default 5)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (and its venv) afterwards")
    arguments = parser.parse_args()
    sys.exit(main(arguments.runs, arguments.keep))
