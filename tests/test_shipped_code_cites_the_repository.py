"""Shipped code (comments, docstrings, help texts) cites only documents a clone or an installed
wheel has: never the workspace's `../shared` folder, which exists only beside this checkout."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHIPPED = ("adapters", "evals", "xpeval/bundled")


def test_no_shipped_module_cites_a_document_outside_the_repository() -> None:
    files = [path for folder in SHIPPED for path in sorted((REPO / folder).rglob("*.py"))]
    files += sorted((REPO / "xpeval").glob("*.py"))
    assert len(files) > 200
    outside = [
        f"{path.relative_to(REPO)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "../shared" in line
    ]
    assert outside == []
