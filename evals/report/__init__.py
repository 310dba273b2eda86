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

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "CHART_SOURCES": "xpeval.evals.report.plots",
    "TREND_COLUMNS": "xpeval.evals.report.plots",
    "Chart": "xpeval.evals.report.plots",
    "EpisodeDetail": "xpeval.evals.report.episodes",
    "accuracy_charts": "xpeval.evals.report.plots",
    "answered_in_run": "xpeval.evals.report.plots",
    "category_charts": "xpeval.evals.report.plots",
    "check_trend": "xpeval.evals.report.plots",
    "episodes_html": "xpeval.evals.report.episodes",
    "history_charts": "xpeval.evals.report.plots",
    "latency_charts": "xpeval.evals.report.plots",
    "latency_note": "xpeval.evals.report.plots",
    "read_details": "xpeval.evals.report.episodes",
    "read_trend": "xpeval.evals.report.trend",
    "report_html": "xpeval.evals.report.html",
    "run_cases": "xpeval.evals.report.html",
    "schema_chart": "xpeval.evals.report.plots",
    "write_report": "xpeval.evals.report.html",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.report.episodes import EpisodeDetail as EpisodeDetail
    from xpeval.evals.report.episodes import episodes_html as episodes_html
    from xpeval.evals.report.episodes import read_details as read_details
    from xpeval.evals.report.html import report_html as report_html
    from xpeval.evals.report.html import run_cases as run_cases
    from xpeval.evals.report.html import write_report as write_report
    from xpeval.evals.report.plots import CHART_SOURCES as CHART_SOURCES
    from xpeval.evals.report.plots import TREND_COLUMNS as TREND_COLUMNS
    from xpeval.evals.report.plots import Chart as Chart
    from xpeval.evals.report.plots import accuracy_charts as accuracy_charts
    from xpeval.evals.report.plots import answered_in_run as answered_in_run
    from xpeval.evals.report.plots import category_charts as category_charts
    from xpeval.evals.report.plots import check_trend as check_trend
    from xpeval.evals.report.plots import history_charts as history_charts
    from xpeval.evals.report.plots import latency_charts as latency_charts
    from xpeval.evals.report.plots import latency_note as latency_note
    from xpeval.evals.report.plots import schema_chart as schema_chart
    from xpeval.evals.report.trend import read_trend as read_trend
