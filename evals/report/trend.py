"""Reading a history trend frame from Parquet, until the history store (`evals.history`) hands
it over itself: one row per run x row key x metric, the columns of `TREND_COLUMNS`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evals.errors import UserError
from evals.report.plots import check_trend


def read_trend(path: Path) -> pd.DataFrame:
    """The trend frame in a Parquet file or folder (anything `pandas.read_parquet` reads), with
    `run_date` as datetimes; UserError when it is absent, unreadable or lacks a column."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no history here (a Parquet file or folder of the trend frame)")
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read it as Parquet: {str(exc).splitlines()[0]}") from exc
    try:
        return check_trend(frame)
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from exc
