"""Reading a history trend frame from Parquet: one row per run x row key x metric, the columns
of `TREND_COLUMNS`. The path may also be the history store itself (the folder `xpeval history
--append` and `nox -s conformance` write, one row per episode): its trend is computed for every
rate, so `--history reports/history` works whichever of the two is there."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from xpeval.errors import UserError
from xpeval.evals.report.plots import check_trend
from xpeval.evals.results.history import load_history
from xpeval.evals.verdict.trend import trend

_EPISODE_COLUMNS = {"case_id", "correct", "adapter", "model"}
"""Columns by which a history store's episode rows are told from a trend frame."""


def read_trend(path: Path) -> pd.DataFrame:
    """The trend frame in a Parquet file or folder (anything `pandas.read_parquet` reads), with
    `run_date` as datetimes; UserError when it is absent, unreadable or lacks a column."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no history here (a Parquet file or folder of the trend frame)")
    if path.is_dir() and any(child.name.startswith("date=") for child in path.iterdir()):
        # the store itself: read by its own reader, which checks every file it holds
        return check_trend(trend(load_history(path), metric="all"))
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read it as Parquet: {str(exc).splitlines()[0]}") from exc
    if "metric" not in frame.columns and set(frame.columns) >= _EPISODE_COLUMNS:
        frame = trend(load_history(path), metric="all")
    try:
        return check_trend(frame)
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from exc
