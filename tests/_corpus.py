"""Where the shared real-data corpus lives, and how tests skip when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
SKIP_REASON = (
    "the shared corpus (../shared/corpus next to the repository) is absent: "
    "real-data tests run only where it is checked out"
)


def corpus_path(*parts: str) -> Path:
    """Path inside ../shared/corpus, skipping the calling test when the corpus is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(SKIP_REASON)
    return path


def corpus_files(pattern: str) -> list[Path]:
    """Files under the corpus matching `pattern`, for parametrization (empty when absent)."""
    if not CORPUS.exists():
        return []
    return sorted(CORPUS.glob(pattern))
