"""Adding an adapter is one registry entry: its conformance tests appear by themselves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests._corpus import REPO_ROOT

PLUGIN = """
from adapters.providers import anthropic
from adapters.registry import WrapperEntry, register_adapter

register_adapter(
    "example-claude-proxy",
    WrapperEntry(contract_parent="anthropic-messages", provider=anthropic.ANTHROPIC, factory=anthropic.create),
)
"""


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "example_adapter_plugin",
            "-p",
            "no:cacheprovider",
            "tests/adapters/test_conformance.py",
            *args,
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _count(output: str, word: str) -> int:
    match = re.search(rf"(\d+) {word}", output)
    return int(match.group(1)) if match else 0


def test_a_new_registry_entry_runs_the_whole_conformance_suite(tmp_path: Path) -> None:
    (tmp_path / "example_adapter_plugin.py").write_text(PLUGIN)
    new = _pytest(tmp_path, "-q", "-k", "example-claude-proxy")
    parent = _pytest(tmp_path, "-q", "--collect-only", "-k", "anthropic-messages")
    assert new.returncode == 0, new.stdout[-3000:] + new.stderr[-2000:]
    ran = _count(new.stdout, "passed")
    assert ran > 0
    parent_tests = [line for line in parent.stdout.splitlines() if "[anthropic-messages" in line]
    assert ran == len(parent_tests), "the new adapter runs exactly the checks its parent runs"
