"""Work done once per test run and shared by every test that needs it, whichever pytest-xdist
worker runs the test (the recipe of pytest-xdist's docs, "Making session-scoped fixtures execute
only once")."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

MADE_FILE = ".made"
"""Written once `make` has returned: a folder without it was left by a `make` that failed."""


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]) -> Path:
    """The folder `name` that `make(folder)` filled, once per test run: in this process without
    pytest-xdist; under it, by the first worker to ask, in the folder all workers share, while the
    others wait for it under a file lock. A `make` that raised is tried again by the next test
    asking, which then fails the same way rather than reading half a folder."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    folder = tmp_path_factory.getbasetemp().parent / name
    with FileLock(str(folder) + ".lock"):
        if not (folder / MADE_FILE).is_file():
            folder.mkdir(exist_ok=True)
            make(folder)
            (folder / MADE_FILE).touch()
    return folder
