"""Running the `xpeval` command: in this process (`Cli`, the `cli` fixture) or, where the process
boundary is what a test is about (exit codes of the real console script, signals, a fresh
interpreter's imports), as a user does (`xpeval`)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from xpeval.evals.cli import main


def without_project_line(stderr: str) -> str:
    """A command's stderr without its first line naming the project it works in (pinned by
    tests/test_project_visible.py), for tests about what it says next."""
    first, _, rest = stderr.partition("\n")
    said = first.removeprefix("xpeval: ")
    return rest if said.startswith(("project ", "no [tool.xpeval] in ")) else stderr


@dataclass(frozen=True)
class Ran:
    """What a command did: its exit status and what it printed (the fields of a CompletedProcess)."""

    returncode: int
    stdout: str
    stderr: str


class Cli:
    """`xpeval ARGS` through `xpeval.evals.cli.main`, in this process: its exit status and its
    output, in `cwd` with `env` added to the environment for the call only (stderr without the
    project line unless `project_line`)."""

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self._capsys = capsys
        self._monkeypatch = monkeypatch

    def __call__(
        self,
        *args: str,
        cwd: Path = REPO_ROOT,
        env: Mapping[str, str] | None = None,
        project_line: bool = False,
    ) -> Ran:
        self._capsys.readouterr()  # what the test printed before is not the command's
        with self._monkeypatch.context() as patch:
            patch.chdir(cwd)
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        printed = self._capsys.readouterr()
        # The line naming the project comes first from every project command; tests about what
        # comes next see it only when they ask (`project_line=True`).
        return Ran(code, printed.out, printed.err if project_line else without_project_line(printed.err))


def in_process(*args: str, cwd: Path = REPO_ROOT) -> Ran:
    """`xpeval ARGS` through `xpeval.evals.cli.main` in this process, from `cwd`, outside any test's
    capture: for fixtures broader than a test's (the `cli` fixture is per test)."""
    printed, errors = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stdout(printed),
        contextlib.redirect_stderr(errors),
    ):
        patch.chdir(cwd)
        code = main(list(args))
    return Ran(code, printed.getvalue(), errors.getvalue())


def xpeval(
    *args: str,
    cwd: Path = REPO_ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`xpeval ARGS` in a fresh interpreter in `cwd`, with `env` added to this environment; fails
    the test on a hang."""
    return subprocess.run(
        [sys.executable, "-m", "xpeval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
