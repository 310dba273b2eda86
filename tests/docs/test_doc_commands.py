"""Every shell command README.md and docs/*.md show runs as the text says (issue 36, "Words that
stay true"): in a scratch copy of what the document assumes (a checkout's data, or a user's own
project from tests/docs/projects/), each exits with the code its document states (0 unless a
marker says otherwise), so a stale flag or file name fails here. A command that needs a key,
the network or the local model's install is skipped by a marker in its document that says why
(the grammar: tests/docs/doc_commands.py and CONTRIBUTING.md); tests/conftest.py prints how many.

One test per command. A block's commands run once per test run, in order, in one scratch folder
(what a command reads, the block's earlier commands wrote; a `cd` moves the next ones), and each
command's test checks its own exit code."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests._once import once_per_run
from tests.docs.doc_commands import (
    CHECKOUT,
    PROJECTS,
    REPO,
    DocCommand,
    MarkerError,
    changes_directory,
    every_command,
    read_commands,
)

COMMANDS = every_command()
TIMEOUT = 600
"""Seconds one command may take (a hang fails its test, naming the command)."""

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIALS")
PROVIDER_PREFIXES = (
    "XPEVAL_",
    "OPENAI_",
    "AZURE_",
    "GOOGLE_",
    "VERTEX_",
    "MOONSHOT_",
    "MIMO_",
    "AWS_",
    "MISTRAL_",
    "CO_",
)


def _environment(home: Path) -> dict[str, str]:
    """This environment without anything a live run could use (a key, an endpoint, a cassette
    mode), with a home of its own (the local model's state and cache: never this machine's
    servers) and the checkout's xpeval first, as a user's activated venv has it."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not any(word in name for word in SECRET_WORDS)
        and not name.startswith(PROVIDER_PREFIXES)
        and name not in {"PYTHONPATH", "VIRTUAL_ENV", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"}
    }
    home.mkdir(parents=True, exist_ok=True)
    return {
        **kept,
        "HOME": str(home),
        "XPEVAL_LOCAL_MODEL_DIR": str(home / "local-model"),
        # the venv's editable install may point at another checkout: this one is under test
        "PYTHONPATH": str(REPO),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{kept.get('PATH', '')}",
    }


def scratch(kind: str, into: Path) -> Path:
    """The folder a document's commands run in: `checkout` (the repository's data beside its code:
    `CHECKOUT`) or `project NAME` (a copy of tests/docs/projects/NAME)."""
    if kind.startswith("project "):
        return Path(shutil.copytree(PROJECTS / kind.split()[1], into / "project"))
    root = into / "checkout"
    for name in CHECKOUT:
        source, target = REPO / name, root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    return root


def _run(text: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail\n{text}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def _said(done: Mapping[str, object]) -> str:
    return f"stdout:\n{str(done['stdout'])[-1500:]}\nstderr:\n{str(done['stderr'])[-2500:]}"


def _play_block(first: DocCommand, folder: Path) -> None:
    """Every command of `first`'s block that runs, in order, in one scratch folder: each exit code
    and output into `folder/ran.json` (a command after one that did not exit as its document
    says still runs; its own test reads what it did)."""
    block = [c for c in COMMANDS if (c.document, c.block) == (first.document, first.block) and c.skip is None]
    cwd = scratch(first.scratch, folder)
    env = _environment(folder / "home")
    ran: dict[int, dict[str, object]] = {}
    for command in block:
        moved = changes_directory(command.text)
        if moved is not None:
            cwd = cwd / moved
            ran[command.number] = {"rc": 0 if cwd.is_dir() else 1, "stdout": "", "stderr": ""}
            continue
        try:
            done = _run(command.text, cwd, env)
            ran[command.number] = {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
        except subprocess.TimeoutExpired as exc:
            ran[command.number] = {
                "rc": None,
                "stdout": str(exc.stdout or ""),
                "stderr": f"timed out after {TIMEOUT} s",
            }
    (folder / "ran.json").write_text(json.dumps(ran), encoding="utf-8")


_PLAYED: dict[str, Path] = {}


def _block_ran(command: DocCommand, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """What each command of `command`'s block did: its block played once per test run, whichever
    test (and pytest-xdist worker) asks first (tests/_once.py); the others read it."""
    key = "doc-" + re.sub(r"\W+", "-", f"{command.document}-{command.block}")
    if key not in _PLAYED:
        first = next(c for c in COMMANDS if (c.document, c.block) == (command.document, command.block))
        _PLAYED[key] = once_per_run(tmp_path_factory, key, lambda folder: _play_block(first, folder))
    loaded: dict[str, dict[str, object]] = json.loads((_PLAYED[key] / "ran.json").read_text(encoding="utf-8"))
    return loaded


def _params() -> list[object]:
    marks = {
        command.id: [pytest.mark.slow] if command.slow else []
        for command in COMMANDS  # a slow command's test is marked, so `-m "not slow"` leaves it out
    }
    return [pytest.param(command, id=command.id, marks=marks[command.id]) for command in COMMANDS]


@pytest.mark.timeout(TIMEOUT * 5)  # the first test of a block plays the whole block
@pytest.mark.parametrize("command", _params())
def test_a_documented_command_exits_as_its_document_says(
    command: DocCommand, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if command.skip is not None:
        pytest.skip(f"{command.id}: {command.skip} (marker in the document)")
    ran = _block_ran(command, tmp_path_factory)
    done = ran[str(command.number)]
    assert done["rc"] == command.expected_exit, (
        f"{command.id}: `{command.text}` exited {done['rc']}, its document says "
        f"{command.expected_exit} (in a scratch {command.scratch}, after the block's earlier commands)\n"
        f"{_said(done)}"
    )


def test_a_stale_flag_in_a_document_fails_its_command(tmp_path: Path) -> None:
    """What this file is for: a document showing a flag xpeval no longer has is red."""
    document = tmp_path / "stale.md"
    document.write_text("```bash\nxpeval cases list --no-such-flag\n```\n", encoding="utf-8")
    (command,) = read_commands(document, "docs/stale.md")
    done = _run(command.text, scratch("checkout", tmp_path), _environment(tmp_path / "home"))
    assert (command.expected_exit, done.returncode) == (0, 2), done.stderr


def test_a_marker_without_a_reason_is_refused(tmp_path: Path) -> None:
    document = tmp_path / "bad.md"
    document.write_text("<!-- xpeval-docs: skip 1 -->\n```bash\nxpeval adapters\n```\n", encoding="utf-8")
    with pytest.raises(MarkerError, match="says no reason"):
        read_commands(document, "docs/bad.md")


def test_the_my_cases_project_holds_the_case_file_docs_cases_md_shows() -> None:
    """The scratch project docs/cases.md's commands run in plays the case file the page shows."""
    text = (REPO / "docs" / "cases.md").read_text(encoding="utf-8")
    shown = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert (PROJECTS / "my-cases" / "my_cases" / "orders.yaml").read_text(encoding="utf-8") == shown


def test_the_my_tasks_project_holds_the_task_file_docs_cases_md_shows() -> None:
    """The scratch project docs/cases.md's task commands run in plays the task file the page shows."""
    text = (REPO / "docs" / "cases.md").read_text(encoding="utf-8")
    shown = text.split("`my_tasks/cancel.yaml`:", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert (PROJECTS / "my-tasks" / "my_tasks" / "cancel.yaml").read_text(encoding="utf-8") == shown
