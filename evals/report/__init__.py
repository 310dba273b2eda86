"""The HTML report and the plots behind it, as functions a notebook calls too.

    from xpeval import load_run
    from xpeval.evals.verdict.scorecard import scorecard, by_category
    from xpeval.evals.report import accuracy_charts, category_charts, write_report

    run = load_run(Path("reports/results.jsonl"))
    for chart in accuracy_charts(scorecard(run.frame)):
        display(chart)                                   # one chart per source, titled with it
    write_report(Path("reports/report.html"), run)       # what `xpeval report` writes

`plots` (frame -> `Chart`: a matplotlib figure and its inline SVG), `html` (the page),
`episodes` (the per-episode view), `notebooks` (executing the report notebooks with nbclient).
Needs matplotlib (the `dev` extra).
"""

from __future__ import annotations

from xpeval.evals.report.episodes import EpisodeDetail, episodes_html, read_details
from xpeval.evals.report.html import report_html, run_cases, write_report
from xpeval.evals.report.plots import (
    CHART_SOURCES,
    TREND_COLUMNS,
    Chart,
    accuracy_charts,
    answered_in_run,
    category_charts,
    check_trend,
    history_charts,
    latency_charts,
    latency_note,
    schema_chart,
)
from xpeval.evals.report.trend import read_trend

__all__ = [
    "CHART_SOURCES",
    "TREND_COLUMNS",
    "Chart",
    "EpisodeDetail",
    "accuracy_charts",
    "answered_in_run",
    "category_charts",
    "check_trend",
    "episodes_html",
    "history_charts",
    "latency_charts",
    "latency_note",
    "read_details",
    "read_trend",
    "report_html",
    "run_cases",
    "schema_chart",
    "write_report",
]
