"""CPU (user + sys) of a command run as a child process, as `/usr/bin/time` reports it."""

from __future__ import annotations

import resource
import subprocess
from collections.abc import Sequence
from pathlib import Path


def child_cpu(argv: Sequence[str], cwd: Path | None = None) -> float:
    """CPU seconds `argv` took, its children included; raises when it exits non-zero."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(list(argv), cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
