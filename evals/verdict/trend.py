"""A rate over time (pure): per run and scorecard row, k of n, the rate and its Wilson interval.

Read from the history store (`xpeval.evals.results.history`), counted as the scorecard counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from xpeval.errors import UserError
from xpeval.evals.verdict.scorecard import RATES, wilson

TREND_COLUMNS = ["run_date", "run", "source", "adapter", "model", "metric", "k", "n", "rate", "lo", "hi"]
"""The trend frame, exactly: one row per run x (source, adapter, model) x metric."""
_TREND_KEY = ["run_date", "run", "source", "adapter", "model"]


def _counts(history: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series]:
    """Per row of `history`: (success, applies) of `metric`, as `xpeval.evals.verdict.scorecard` counts them
    (its `_counts`; tests/history/test_trend.py holds the two equal)."""
    ones = pd.Series(True, index=history.index)
    if metric == "accuracy":
        return _judged(history["correct"])
    if metric == "tool_selection":
        return _judged(history["tool_selection_correct"])
    if metric == "arguments":
        return _judged(history["arguments_correct"])
    if metric == "schema_valid":
        return _judged(history["schema_valid"])
    if metric == "irrelevance":
        success, judged = _judged(history["correct"])
        applies = history["irrelevance"].astype(bool) & judged
        return success & applies, applies
    if metric == "malformed":
        return history["malformed"].astype(bool), ones
    return history["error"].astype(bool), ones


def _judged(column: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(true, judged) of a verdict column that may hold None (not judged)."""
    judged = column.notna()
    return column.where(judged, False).astype(bool), judged


def trend(history: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Per run and (source, adapter, model): `metric`'s k of n, its rate and Wilson 95 %
    interval, oldest run first; exactly the columns of TREND_COLUMNS. `metric` is one of the
    scorecard's rates, or `all` for every rate. A row where the metric applies to no episode
    (irrelevance of a run without irrelevance cases) is left out."""
    metrics: Sequence[str] = RATES if metric == "all" else [metric]
    if metric != "all" and metric not in RATES:
        raise UserError(f"--metric must be one of {', '.join(RATES)} or all, got {metric!r}")
    parts = []
    for name in metrics:
        if history.empty:
            break
        success, applies = _counts(history, name)
        counted = history[_TREND_KEY].assign(k=success.astype("int64"), n=applies.astype("int64"))
        grouped = counted.groupby(_TREND_KEY, sort=False, dropna=False)[["k", "n"]].sum().reset_index()
        parts.append(grouped[grouped["n"] > 0].assign(metric=name))
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=_TREND_DTYPES[c]) for c in TREND_COLUMNS})
    table = pd.concat(parts, ignore_index=True)
    bounds = [wilson(int(k), int(n)) for k, n in zip(table["k"], table["n"], strict=True)]
    table["rate"] = table["k"] / table["n"]
    table["lo"] = [low for low, _ in bounds]
    table["hi"] = [high for _, high in bounds]
    table = table.sort_values(["run_date", "run", "metric", "source", "adapter", "model"], kind="stable")
    return table[TREND_COLUMNS].astype(_TREND_DTYPES).reset_index(drop=True)


_TREND_DTYPES = {
    "run_date": "datetime64[us]",
    "run": "str",
    "source": "str",
    "adapter": "str",
    "model": "str",
    "metric": "str",
    "k": "int64",
    "n": "int64",
    "rate": "float64",
    "lo": "float64",
    "hi": "float64",
}
