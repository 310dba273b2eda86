"""Assemble the model file from its parts, prove it is the pinned GGUF, read its header.

The parts come from a third-party re-upload, so the whole file is checked against the pinned
size and sha256 before the server may load it. A verified file gets a stamp (its digest, size
and mtime); later starts trust the file while it still matches the stamp, instead of hashing
1.1 GB on every start.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, cast

from xpeval.evals.local_model.setup_errors import ModelIntegrityError

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


# The GGUF header: magic, version, tensor count, then typed key/value pairs (see the format's
# value-type numbering below). Only the metadata is read, never the tensors.
GGUF_MAGIC = b"GGUF"
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("<B", 1),
    1: ("<b", 1),
    2: ("<H", 2),
    3: ("<h", 2),
    4: ("<I", 4),
    5: ("<i", 4),
    6: ("<f", 4),
    7: ("<?", 1),
    10: ("<Q", 8),
    11: ("<q", 8),
    12: ("<d", 8),
}
_STRING, _ARRAY = 8, 9
GgufScalar = int | float | bool | str


class _Reader:
    def __init__(self, source: BinaryIO) -> None:
        self.source = source

    def take(self, count: int) -> bytes:
        data = self.source.read(count)
        if len(data) != count:
            raise ModelIntegrityError("the GGUF header ends early")
        return data

    def number(self, fmt: str, size: int) -> Any:
        return struct.unpack(fmt, self.take(size))[0]

    def string(self) -> str:
        return self.take(self.number("<Q", 8)).decode("utf-8", "replace")

    def value(self, kind: int) -> GgufScalar | None:
        """A scalar or string value; an array is skipped (None): the header's arrays are the
        tokenizer's vocabulary, large and not needed here."""
        if kind in _SCALARS:
            return cast(GgufScalar, self.number(*_SCALARS[kind]))
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind, count = self.number("<I", 4), self.number("<Q", 8)
            if item_kind in _SCALARS:
                self.take(_SCALARS[item_kind][1] * count)
            else:
                for _ in range(count):
                    self.value(item_kind)
            return None
        raise ModelIntegrityError(f"unknown GGUF value type {kind}")


def read_metadata(path: Path, keys: Iterable[str] | None = None) -> dict[str, GgufScalar]:
    """The scalar and string metadata of GGUF file `path` (arrays left out).

    With `keys`, reading stops once all of them are found (the `general.*` keys come first).
    """
    wanted = set(keys) if keys is not None else None
    found: dict[str, GgufScalar] = {}
    with path.open("rb") as source:
        reader = _Reader(source)
        if reader.take(4) != GGUF_MAGIC:
            raise ModelIntegrityError(f"{path} is not a GGUF file")
        version = reader.number("<I", 4)
        if version not in (2, 3):
            raise ModelIntegrityError(f"{path}: unsupported GGUF version {version}")
        reader.number("<Q", 8)  # tensor count
        for _ in range(reader.number("<Q", 8)):
            key = reader.string()
            value = reader.value(reader.number("<I", 4))
            if value is not None and (wanted is None or key in wanted):
                found[key] = value
            if wanted is not None and wanted <= found.keys():
                break
    return found
