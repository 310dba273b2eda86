"""Result rows and frames built from per-case outcomes, for the gate's tests."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from xpeval.evals.results.rows import ResultRow
from xpeval.evals.verdict.scorecard import results_frame


def row(
    case_id: str,
    correct: bool,
    *,
    adapter: str = "openai-compatible",
    source: str = "local-model",
    model: str = "qwen",
    category: str = "simple",
    error_kind: str | None = None,
    malformed: bool = False,
    schema_valid: bool | None = None,
) -> ResultRow:
    failed = error_kind is not None
    return ResultRow(
        run="r",
        case_id=case_id,
        category=category,
        adapter=adapter,
        wire="openai-chat",
        model=model,
        attempt=1,
        final=True,
        source=source,  # type: ignore[arg-type]
        correct=correct and not failed,
        tool_selection_correct=correct and not failed,
        arguments_correct=None if failed else correct,
        irrelevance=category == "irrelevance",
        malformed=malformed,
        schema_valid=None if failed else schema_valid,
        latency_s=0.1,
        started_at="2026-12-01T00:00:00+00:00",
        error_kind=error_kind,
        reason="boom" if failed else None,
    )


def declined(case_ids: Sequence[str], *, run: str, model: str = "qwen") -> list[ResultRow]:
    """Rows of built-in irrelevance cases where the model rightly made no call, with the verdict
    the gate's chain of custody scores them again to (`xpeval.evals.verdict.custody`)."""
    return [
        row(case_id, True, category="irrelevance", model=model).model_copy(
            update={"run": run, "arguments_correct": None}
        )
        for case_id in case_ids
    ]


def outcomes(passing: Sequence[bool], **kwargs: object) -> list[ResultRow]:
    """One row per case `case_000`, `case_001`, ... passing as given."""
    return [row(f"case_{i:03d}", ok, **kwargs) for i, ok in enumerate(passing)]  # type: ignore[arg-type]


def frame(*groups: list[ResultRow]) -> pd.DataFrame:
    return results_frame([r for group in groups for r in group])


def flipped(base: Sequence[bool], worse: int, better: int = 0) -> list[bool]:
    """`base` with the first `worse` passing cases failing and the first `better` failing ones passing."""
    out = list(base)
    for index in [i for i, ok in enumerate(base) if ok][:worse]:
        out[index] = False
    for index in [i for i, ok in enumerate(base) if not ok][:better]:
        out[index] = True
    return out
