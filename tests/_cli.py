"""Running the `xpeval` command as a user does: a fresh interpreter, its output captured."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests._corpus import REPO_ROOT


def xpeval(
    *args: str,
    cwd: Path = REPO_ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`xpeval ARGS` in `cwd`, with `env` added to this environment; fails the test on a hang."""
    return subprocess.run(
        [sys.executable, "-m", "xpeval", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
