"""Debian's headless Chromium for the report's browser test: found, or installed with apt-get.

`find_or_install()` returns the browser's path, or a reason it cannot be had; `require()` decides
what that reason means: a failure in CI (`CI` set: CI must really render the report), a skip
with the reason elsewhere (a developer's machine may not be root or have no Debian mirror).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
INSTALL_SECONDS = 900
FLAGS = (
    "--headless",
    "--no-sandbox",  # root cannot use Chromium's sandbox; the page is our own file
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Every host name fails to resolve: the report must render with no network at all.
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


@dataclass(frozen=True)
class Found:
    path: Path | None
    reason: str = ""


def _installed() -> Path | None:
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    found = shutil.which("chromium")
    return Path(found) if found else None


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", *args], capture_output=True, text=True, env=env, timeout=INSTALL_SECONDS, check=False
    )


def find_or_install() -> Found:
    """Chromium, installed with `apt-get install -y chromium` when absent (as root, where apt-get
    exists); otherwise the reason it is not there."""
    path = _installed()
    if path is not None:
        return Found(path)
    if shutil.which("apt-get") is None:
        return Found(None, "chromium is not installed and there is no apt-get to install it with")
    if os.geteuid() != 0:
        return Found(None, "chromium is not installed; installing it needs root: apt-get install -y chromium")
    done = _apt("install", "-y", "chromium")
    if done.returncode != 0:
        # The package lists may be missing or stale on a fresh machine.
        _apt("update")
        done = _apt("install", "-y", "chromium")
    path = _installed()
    if path is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return Found(None, f"apt-get install -y chromium failed (exit {done.returncode}): {' | '.join(tail)}")
    return Found(path)


def require(find: Callable[[], Found] = find_or_install, environment: Mapping[str, str] = os.environ) -> Path:
    """Chromium's path; without it, `pytest.fail` in CI and `pytest.skip` elsewhere, with the reason."""
    found = find()
    if found.path is not None:
        return found.path
    message = f"headless Chromium is needed to check that the report renders: {found.reason}"
    if environment.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def run(chromium: Path, profile: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Chromium headless with a throwaway profile."""
    return subprocess.run(
        [str(chromium), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
