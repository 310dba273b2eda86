"""The plots: one chart per source, each labelled with it, emulated ones marked pipeline only,
numbers that are the scorecard's, and SVG that a page can hold many of."""

from __future__ import annotations

import re
from inspect import ismodule
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.legend import Legend

import xpeval.evals.report
from tests.report.conftest import ANSWERED_SOURCES, SOURCES, TREND_SOURCES, schema_pairs, trend_frame
from xpeval.evals.report import (
    CHART_SOURCES,
    Chart,
    accuracy_charts,
    category_charts,
    check_trend,
    history_charts,
    latency_charts,
    latency_note,
    schema_chart,
)
from xpeval.evals.results.load import load_run
from xpeval.evals.verdict.scorecard import by_category, scorecard


def _legend(ax: Axes) -> Legend:
    legend = ax.get_legend()
    assert legend is not None, "the chart has no legend"
    return legend


def _check_labelled(chart: Chart) -> None:
    """The source is in the chart's title, its caption, its SVG root and its visible text."""
    assert chart.source in CHART_SOURCES
    root = re.match(r"<svg\b[^>]*>", chart.svg)
    assert root is not None
    assert 'class="xpeval-chart"' in root.group(0)
    assert f'data-source="{chart.source}"' in root.group(0)
    assert f'data-kind="{chart.kind}"' in root.group(0)
    text = " ".join(re.findall(r"<text\b[^>]*>([^<]*)</text>", chart.svg))
    if chart.source == "emulated":
        assert "EMULATED: pipeline only" in chart.title and "PIPELINE ONLY" in text
        assert "pipeline only" in chart.caption.lower() or "EMULATED" in chart.caption
    else:
        assert f"source {chart.source}" in chart.title
    assert chart.title.split(":")[0] in text  # the title is drawn, not only in the markup
    assert f"<title>{chart.title}</title>" in chart.svg.replace("&quot;", '"')


def test_accuracy_has_one_chart_per_source_with_the_scorecards_wilson_intervals(run_path: Path) -> None:
    card = scorecard(load_run(run_path).frame)

    charts = accuracy_charts(card)

    assert [c.source for c in charts] == list(SOURCES)
    for chart in charts:
        _check_labelled(chart)
        rows = card[card["source"] == chart.source].reset_index(drop=True)
        ax = chart.figure.axes[0]
        bars = next(c for c in ax.containers if isinstance(c, BarContainer))
        assert [round(p.get_width(), 6) for p in bars.patches] == [round(v, 6) for v in rows["accuracy"]]
        whiskers = bars.errorbar
        assert isinstance(whiskers, ErrorbarContainer)
        segments = whiskers.lines[2][0].get_segments()
        assert [(round(s[0][0], 6), round(s[1][0], 6)) for s in segments] == [
            (round(lo, 6), round(hi, 6))
            for lo, hi in zip(rows["accuracy_lo"], rows["accuracy_hi"], strict=True)
        ]


def test_emulated_bars_are_grey_and_hatched_and_their_rows_say_pipeline_only(run_path: Path) -> None:
    charts = {c.source: c for c in accuracy_charts(scorecard(load_run(run_path).frame))}
    emulated = charts["emulated"].figure.axes[0]
    patch = next(c for c in emulated.containers if isinstance(c, BarContainer)).patches[0]
    assert patch.get_hatch() == "//"
    assert all("[pipeline only]" in label.get_text() for label in emulated.get_yticklabels())
    live = charts["live"].figure.axes[0]
    assert not any("pipeline" in label.get_text() for label in live.get_yticklabels())
    cassette = charts["cassette"].figure.axes[0]
    assert "(rec. 2026-11-20..2026-11-20)" in cassette.get_yticklabels()[0].get_text()


def test_the_heatmap_has_a_row_per_adapter_and_model_and_a_column_per_category(run_path: Path) -> None:
    categories = by_category(load_run(run_path).frame)

    charts = category_charts(categories)

    assert [c.source for c in charts] == list(SOURCES)
    for chart in charts:
        _check_labelled(chart)
    live = charts[0].figure.axes[0]
    assert [t.get_text() for t in live.get_xticklabels()] == [
        "simple",
        "multiple",
        "parallel",
        "irrelevance",
        "multi turn",
    ]
    cells = {t.get_text() for t in live.texts}
    assert "0%\n0/2" in cells  # both parallel cases wrong
    assert "100%\n3/3" in cells  # every simple case right


def test_schema_acceptance_stacks_as_is_rewritten_and_refused_per_adapter() -> None:
    chart = schema_chart(schema_pairs())

    assert chart is not None and chart.source == "offline"
    _check_labelled(chart)
    ax = chart.figure.axes[0]
    stacks = [c for c in ax.containers if isinstance(c, BarContainer)]
    widths = [[p.get_width() for p in bars.patches] for bars in stacks]
    assert widths == [[2, 3, 0], [1, 1, 2], [1, 0, 2]]  # as-is, rewritten, refused; per adapter
    assert [t.get_text() for t in _legend(ax).get_texts()] == ["as-is", "rewritten", "refused"]
    assert "no provider called" in _legend(ax).get_title().get_text()


def test_there_is_no_schema_chart_without_pairs() -> None:
    assert schema_chart(None) is None
    assert schema_chart(schema_pairs().iloc[0:0]) is None


def test_latency_is_drawn_only_for_episodes_answered_in_the_run(run_path: Path) -> None:
    frame = load_run(run_path).frame

    charts = latency_charts(frame)

    assert [c.source for c in charts] == list(ANSWERED_SOURCES)
    for chart in charts:
        _check_labelled(chart)
    note = latency_note(frame)
    assert note is not None and "16 of 32 episodes were replayed" in note


def test_a_replayed_run_has_no_latency_chart_and_says_why(run_path: Path) -> None:
    frame = load_run(run_path).frame.assign(recorded_at="2026-11-29T00:00:00+00:00")

    assert latency_charts(frame) == []
    assert latency_note(frame) == (
        "No latency to show: all 32 episodes were replayed from recordings, and a replay's time says "
        "nothing about the model."
    )


def test_history_has_one_line_per_row_key_per_source_with_the_runs_intervals() -> None:
    trend = trend_frame()

    charts = history_charts(trend)

    assert [c.source for c in charts] == list(TREND_SOURCES)
    for chart in charts:
        _check_labelled(chart)
    live = charts[0].figure.axes[0]
    (line,) = live.get_lines()[:1]
    assert np.allclose(line.get_ydata(), [0.6, 0.66, 0.72, 0.78])
    assert [t.get_text() for t in _legend(live).get_texts()] == ["openai-chat · gpt-4.1-mini"]
    assert "source: live" in _legend(live).get_title().get_text()
    other = history_charts(trend, metric="tool_selection")
    assert other[0].title == "Tool selection over time: source live"


def test_no_history_means_no_history_chart() -> None:
    assert history_charts(None) == []
    assert history_charts(trend_frame().iloc[0:0]) == []


def test_a_trend_frame_without_its_columns_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no column lo, hi"):
        check_trend(trend_frame().drop(columns=["lo", "hi"]))
    dates = check_trend(trend_frame())["run_date"]
    assert str(dates.dtype) == "datetime64[ns]" or str(dates.dtype).startswith("datetime64")
    assert dates.iloc[0] == pd.Timestamp("2026-11-27")


def test_svg_ids_are_unique_across_the_charts_of_a_page(run_path: Path) -> None:
    frame = load_run(run_path).frame
    charts = [
        *accuracy_charts(scorecard(frame)),
        *category_charts(by_category(frame)),
        *latency_charts(frame),
        *history_charts(trend_frame()),
        *history_charts(trend_frame(), metric="tool_selection"),
    ]
    ids = [i for chart in charts for i in re.findall(r'\sid="([^"]+)"', chart.svg)]

    assert ids and len(ids) == len(set(ids))
    for chart in charts:
        own = set(re.findall(r'\sid="([^"]+)"', chart.svg))
        assert set(re.findall(r'(?:url\(#|href="#)([^")]+)', chart.svg)) <= own


def test_a_chart_is_self_contained_svg() -> None:
    chart = schema_chart(schema_pairs())
    assert chart is not None

    assert chart.svg.startswith("<svg ") and chart.svg.rstrip().endswith("</svg>")
    assert not re.search(r'(?:href|src)="(?!#)', chart.svg)  # no reference outside the chart
    assert "<image" not in chart.svg and "<script" not in chart.svg
    assert chart._repr_html_() == chart.html() and chart.svg in chart.html()


def test_the_public_names_are_exactly_all() -> None:
    names = xpeval.evals.report.__all__
    assert len(names) == len(set(names))
    # every public name the package lists in dir(), imported or not (its exports load lazily)
    public = {n for n in dir(xpeval.evals.report) if not n.startswith("_")}
    assert all(not ismodule(getattr(xpeval.evals.report, n)) for n in public)
    assert public == set(names)
