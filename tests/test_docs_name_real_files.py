"""Every file a document of the repository names exists: docs/*.md, README.md and each folder's
RULES.md cite modules and files by path, and a rename must take its documents along."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted(
    [
        REPO / "README.md",
        REPO / "CONTRIBUTING.md",
        *(REPO / "docs").glob("*.md"),
        *REPO.glob("adapters/**/RULES.md"),
        *REPO.glob("evals/**/RULES.md"),
    ]
)
CITED = re.compile(
    r"`((?:adapters|evals|xpeval|tests|benchmarks|docs|bfcl|notebooks|examples|\.ci|\.github)/[\w./-]*)`"
)
"""A path in backticks that starts at one of the repository's top-level folders."""
BARE = re.compile(r"`([\w/.-]+\.(?:py|md|json|yaml|jinja))`")
"""In a folder's RULES.md, a file named by itself lives in that folder (or at the repository root)."""
PLACEHOLDER = re.compile(r"[<>*{}]|\.\.\.")
"""A path pattern rather than a file (`cassettes/<adapter>/...`, `tests/**/test_*.py`)."""


ELSEWHERE = re.compile(r"[\w.-]+/[\w.-]+\s*$")
"""Text before a path that names another repository (`pydantic/pydantic-ai `tests/...``): a
source cited from outside, not a file of this one."""


def _cited(document: Path) -> list[str]:
    text = document.read_text(encoding="utf-8")
    patterns = [CITED, BARE] if document.name == "RULES.md" else [CITED]
    found = {
        match.group(1)
        for pattern in patterns
        for match in pattern.finditer(text)
        if not ELSEWHERE.search(text[max(0, match.start() - 80) : match.start()])
    }
    return sorted(path for path in found if not PLACEHOLDER.search(path))


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(REPO)) for d in DOCUMENTS])
def test_every_path_a_document_names_exists(document: Path) -> None:
    missing = [
        path
        for path in _cited(document)
        if not (REPO / path).exists() and not (document.parent / path).exists()
    ]
    assert not missing, f"{document.relative_to(REPO)} names files that do not exist: {missing}"
