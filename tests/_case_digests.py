"""The case digests a run header records (`case_digests`), for results files tests write by hand."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from xpeval.evals.cases import load_cases
from xpeval.evals.results.run_plan import case_digest

UNKNOWN = "0" * 64
"""The digest given to a planned id that is no built-in case (its file never reaches a check)."""


@cache
def _builtin() -> dict[str, str]:
    return {item.case.id: case_digest(item.case) for item in load_cases()}


def builtin_digests(case_ids: Iterable[str]) -> dict[str, str]:
    """Each planned id's digest: the built-in case's, or `UNKNOWN` for an id of no built-in case."""
    known = _builtin()
    return {case_id: known.get(case_id, UNKNOWN) for case_id in case_ids}
