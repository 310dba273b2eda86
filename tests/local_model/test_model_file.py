"""Assembling the GGUF from its parts: the pinned bytes or nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.local_model.conftest import write_parts
from xpeval.evals.local_model import ModelIntegrityError
from xpeval.evals.local_model.gguf import assemble, is_verified

CONTENTS = [b"first|", b"second|", b"third"]
WHOLE = b"".join(CONTENTS)
SHA = hashlib.sha256(WHOLE).hexdigest()


def test_parts_are_concatenated_in_order_and_verified(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CONTENTS)

    model = assemble(parts, tmp_path / "model.gguf", sha256=SHA, size=len(WHOLE))

    assert model.read_bytes() == WHOLE
    assert is_verified(model, SHA)


def test_parts_with_the_wrong_digest_leave_no_model_file(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", [b"first|", b"SECOND|", b"third"])
    dest = tmp_path / "model.gguf"

    with pytest.raises(ModelIntegrityError, match="sha256"):
        assemble(parts, dest, sha256=SHA, size=len(WHOLE))

    assert list(tmp_path.glob("model.gguf*")) == []


def test_parts_of_the_wrong_total_size_are_refused_before_copying(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CONTENTS[:2])

    with pytest.raises(ModelIntegrityError, match="bytes, expected"):
        assemble(parts, tmp_path / "model.gguf", sha256=SHA, size=len(WHOLE))


def test_a_verified_model_is_reused_without_reading_the_parts(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CONTENTS)
    dest = assemble(parts, tmp_path / "model.gguf", sha256=SHA, size=len(WHOLE))
    for part in parts:
        part.unlink()

    assert assemble(parts, dest, sha256=SHA, size=len(WHOLE)) == dest


def test_a_model_file_changed_after_verification_is_rebuilt(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "parts", CONTENTS)
    dest = assemble(parts, tmp_path / "model.gguf", sha256=SHA, size=len(WHOLE))
    dest.write_bytes(b"tampered")
    os.utime(dest, ns=(1, 1))

    assert not is_verified(dest, SHA)
    assert assemble(parts, dest, sha256=SHA, size=len(WHOLE)).read_bytes() == WHOLE
