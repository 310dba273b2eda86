"""Exit codes are a contract CI reads (xpeval/errors.py `ExitCode`, `xpeval --help`, README): a
failed verdict (1) is never what a crash or a missing optional dependency returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._cli import Cli, without_project_line
from tests._corpus import REPO_ROOT
from xpeval.errors import ExitCode
from xpeval.evals.extras import _command_for

# A fresh interpreter where `matplotlib` cannot be imported (None in sys.modules makes `import`
# raise ModuleNotFoundError, as in an install without the extra), or where the `adapters`
# command's handler is a bug.
_KEY = "placeholder-secret-abcdefghijklmnopqrstuvwxyz"
_WITHOUT_MATPLOTLIB = "import sys; sys.modules['matplotlib'] = None"
_BROKEN_HANDLER = (
    "import xpeval.evals.commands.adapters as c\n"
    "def run(args):\n    raise RuntimeError('boom placeholder-secret-abcdefghijklmnopqrstuvwxyz')\n"
    "c.run = run"
)


def _xpeval_with(prelude: str, *args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nfrom xpeval.evals.cli import console_main\nraise SystemExit(console_main())"
    # The key the broken handler's message echoes is the user's (scrubbed as any known secret).
    env = {**os.environ, "OPENAI_API_KEY": _KEY}
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def test_a_missing_report_extra_exits_3_naming_the_extra_not_as_a_failed_verdict(tmp_path: Path) -> None:
    done = _xpeval_with(_WITHOUT_MATPLOTLIB, "report", "--results", str(tmp_path / "none.jsonl"))
    assert done.returncode == ExitCode.MISSING_EXTRA, done.stderr
    assert "'report' extra" in done.stderr and "pip install" in done.stderr
    said = without_project_line(done.stderr)
    assert "Traceback" not in said and len(said.strip().splitlines()) == 1


def test_an_internal_error_exits_4_in_one_scrubbed_line_and_debug_shows_the_traceback() -> None:
    done = _xpeval_with(_BROKEN_HANDLER, "adapters")
    assert done.returncode == ExitCode.INTERNAL, done.stderr
    assert done.stderr.startswith("xpeval: internal error: RuntimeError: boom")
    assert "Traceback" not in done.stderr and "--debug" in done.stderr
    assert "abcdefghijklmnopqrstuvwxyz" not in done.stderr
    debug = _xpeval_with(_BROKEN_HANDLER, "adapters", "--debug")
    assert debug.returncode == ExitCode.INTERNAL
    assert "Traceback" in debug.stderr and "abcdefghijklmnopqrstuvwxyz" not in debug.stderr


def test_help_documents_every_exit_code(cli: Cli) -> None:
    shown = cli("--help").stdout
    for code in ExitCode:
        assert f"  {int(code)} " in shown, code


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (None, "pip install 'xpeval[report]==1.2.3'"),
        (
            {"url": "file:///src/my%20xpeval", "dir_info": {"editable": True}},
            "pip install -e '/src/my xpeval[report]'",
        ),
        ({"url": "file:///src/xpeval", "dir_info": {}}, "pip install '/src/xpeval[report]'"),
        (
            {"url": "https://github.com/o/xpeval", "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
            "pip install 'xpeval[report] @ git+https://github.com/o/xpeval@abc123'",
        ),
        (
            {"url": "https://example.org/xpeval-1.2.3.tar.gz", "archive_info": {}},
            "pip install 'xpeval[report] @ https://example.org/xpeval-1.2.3.tar.gz'",
        ),
    ],
)
def test_an_extra_is_installed_from_where_xpeval_came_from(
    direct_url: dict[str, object] | None, expected: str
) -> None:
    record = None if direct_url is None else json.dumps(direct_url)
    assert _command_for(record, "1.2.3", "report") == expected
