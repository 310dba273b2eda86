"""Figures the documents state about what the repository holds today are computed again here
(issue 36, "figures in the docs are generated or dated"): a count of committed cases, cassettes
or recordings that the text gives as current must be what the checkout holds. A figure measured
once (a benchmark, a recording session, a report's size) carries its date in the text instead
("measured 2026-12-01: ..."), and is not checked here."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from xpeval.evals.cases import load_cases

REPO = Path(__file__).resolve().parents[2]


def _builtin_cases() -> int:
    return len(load_cases())


def _single_turn_builtin_cases() -> int:
    return sum(1 for loaded in load_cases() if loaded.case.category not in ("multi_turn", "approval"))


def _vendor_cases() -> int:
    return len([c for c in (REPO / "vendors" / "cases.txt").read_text().strip().split(",") if c])


def _largest_cassette_mb() -> str:
    largest = max(path.stat().st_size for path in (REPO / "cassettes").rglob("*.yaml"))
    return f"{largest / 1e6:.1f}"


def _moonshot(source: str | None) -> int:
    files = list((REPO / "cassettes" / "moonshot").rglob("*.yaml"))
    if source is None:
        return len(files)
    return sum(1 for path in files if f"source: {source}" in path.read_text(encoding="utf-8")[-4000:])


FIGURES: list[tuple[str, str, Callable[[], object]]] = [
    # (document, the sentence with the figure as a group, what the checkout holds)
    ("README.md", r"On a local-model row, 12 of (\d+) cases flipping", _builtin_cases),
    ("README.md", r"all (\d+) single-turn built-in cases", _single_turn_builtin_cases),
    ("docs/reference-runs.md", r"recorded for both: all (\d+) single-turn ones", _vendor_cases),
    ("README.md", r"the largest committed cassette is ([\d.]+) MB", _largest_cassette_mb),
    ("README.md", r"Except (\d+) of moonshot's \d+", lambda: _moonshot("emulated")),
    ("README.md", r"Except \d+ of moonshot's (\d+)", lambda: _moonshot(None)),
]


@pytest.mark.parametrize(("document", "sentence", "holds"), FIGURES, ids=[f[1][:40] for f in FIGURES])
def test_a_figure_a_document_gives_as_current_is_what_the_checkout_holds(
    document: str, sentence: str, holds: Callable[[], object]
) -> None:
    text = " ".join((REPO / document).read_text(encoding="utf-8").split())
    found = re.search(sentence, text)
    assert found, f"{document} no longer says {sentence!r}: update this test with the text"
    assert found.group(1) == str(holds()), f"{document}: {found.group(0)!r}, the checkout holds {holds()}"


def test_a_figure_of_a_past_measurement_carries_its_date() -> None:
    """docs/reports.md gave 1,484 episodes and ten adapters undated; the set grew to 1,802 and 13."""
    text = " ".join((REPO / "docs" / "reports.md").read_text(encoding="utf-8").split())
    for figure in re.finditer(r"[\d,]+ episodes, \w+ adapters", text):
        before = text[max(0, figure.start() - 40) : figure.start()]
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", before), f"undated figure: {figure.group(0)!r}"
