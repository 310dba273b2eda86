"""A labelled case's (or turn's) expectation, typed: the tests of scoring and case files are
about labelled cases, where `expected` is never None."""

from __future__ import annotations

from typing import Protocol

from xpeval.evals.cases.model import Expected


class _HasExpected(Protocol):
    @property
    def expected(self) -> Expected | None: ...


def labelled(item: _HasExpected) -> Expected:
    assert item.expected is not None, "an unlabelled case has no expected calls"
    return item.expected
