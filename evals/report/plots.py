"""The report's plots: pure functions from the suite's tables to `Chart`s (a matplotlib figure and
its inline SVG), one chart per source.

Every chart is drawn for one source only (`live`, `cassette`, `local-model`, `emulated`, or
`offline` for the schema-acceptance measurement, which calls no provider), names it in its
title, and carries it in its SVG root (`<svg class="xpeval-chart" data-source="...">`). Rows of
different sources never share an axis: an emulated row is a perfect model's answer replayed
through the adapter's pipeline (README, "What the committed cassettes are"), so its 100 % next to
a provider's 49 % would read as a measurement. Emulated charts are grey (bars also hatched) and
stamped "PIPELINE ONLY".

matplotlib draws them: its SVG backend writes self-contained markup (no script, no font file, no
network), which a page inlines and a notebook displays (`Chart._repr_html_`) without any
JavaScript runtime.

    card = scorecard(load_run(path).frame)
    for chart in accuracy_charts(card):
        display(chart)                 # in a notebook; chart.svg is the markup, chart.figure the figure
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from html import escape
from typing import Any, Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import PercentFormatter

from xpeval.evals.cases.model import CATEGORIES
from xpeval.evals.verdict.scorecard import SOURCE_NOTES, SOURCE_ORDER

ChartKind = Literal["accuracy", "categories", "schema", "latency", "history"]

SCHEMA_SOURCE = "offline"
"""The schema-acceptance chart's source: the dialect passes judged by the acceptance rules, no
provider called (`xpeval.evals.acceptance.table.PROVENANCE`)."""
CHART_SOURCES = (*SOURCE_ORDER, SCHEMA_SOURCE)

SOURCE_COLOURS = {
    # Okabe-Ito: told apart with any colour vision; emulated is grey on purpose.
    "live": "#0072B2",
    "cassette": "#009E73",
    "local-model": "#E69F00",
    "emulated": "#9a9a9a",
    SCHEMA_SOURCE: "#CC79A7",
}
PIPELINE_ONLY = "PIPELINE ONLY"
EMULATED_CMAP = LinearSegmentedColormap.from_list("xpeval-emulated", ["#ffffff", "#c8c8c8"])
EMULATED_TITLE = "EMULATED: pipeline only, not a provider measurement"

TREND_COLUMNS = ["run_date", "run", "source", "adapter", "model", "metric", "k", "n", "rate", "lo", "hi"]
"""The history trend frame (one row per run x row key x metric), as `xpeval.evals.results.history` writes
it."""


@dataclass(frozen=True)
class Chart:
    """One plot of one source: the figure, and the self-contained SVG a page inlines."""

    kind: ChartKind
    source: str
    title: str
    caption: str = field(repr=False)
    figure: Figure = field(repr=False)
    key: str = ""
    """Tells apart charts of the same kind and source (the history metric); part of the SVG ids."""

    @cached_property
    def svg(self) -> str:
        return figure_svg(
            self.figure,
            kind=self.kind,
            source=self.source,
            title=self.title,
            salt=f"{self.kind}-{self.source}-{self.key}",
        )

    def html(self) -> str:
        """The chart and its caption, as the report shows it."""
        return (
            f'<figure class="xpeval-figure" data-kind="{self.kind}" data-source="{escape(self.source)}">'
            f"{self.svg}<figcaption>{source_badge(self.source)} {escape(self.caption)}</figcaption></figure>"
        )

    def _repr_html_(self) -> str:
        return self.html()


def source_badge(source: str) -> str:
    """The source as a coloured label (emulated also says what it is)."""
    text = f"{source}: pipeline only" if source == "emulated" else source
    colour = SOURCE_COLOURS.get(source, "#555555")
    return (
        f'<span class="xpeval-source" data-source="{escape(source)}" style="border-color:{colour}">'
        f"{escape(text)}</span>"
    )


def source_caption(source: str) -> str:
    """What a number of this source means (`xpeval.evals.verdict.scorecard.SOURCE_NOTES`)."""
    if source == SCHEMA_SOURCE:
        return "offline: each adapter's dialect pass judged by the published rules; no provider was called"
    return SOURCE_NOTES.get(source, source)


def chart_title(what: str, source: str) -> str:
    if source == "emulated":
        return f"{what}: {EMULATED_TITLE}"
    return f"{what}: source {source}"


_SVG_OPEN = re.compile(r"<svg\b[^>]*>")
_ID = re.compile(r'\sid="([^"]+)"')
_REFERENCE = re.compile(r'(url\(#|href="#)([^")]+)')


def figure_svg(figure: Figure, *, kind: str, source: str, title: str, salt: str) -> str:
    """The figure as an `<svg class="xpeval-chart">` element to inline in HTML.

    Text stays text (`svg.fonttype: none`: searchable, and no glyph outlines to ship); the XML
    prolog and metadata go; ids are made unique per chart (a page holds many SVGs, and
    matplotlib numbers its ids from 1 in each), and ids nothing refers to are dropped.
    """
    buffer = io.StringIO()
    for text_artist in figure.findobj(Text):
        text_artist.set_usetex(False)  # a matplotlibrc's `text.usetex` would hand labels to TeX
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "text.usetex": False}):
        figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
    referenced = {match.group(2) for match in _REFERENCE.finditer(text)}
    prefix = "x" + re.sub(r"[^A-Za-z0-9_-]", "-", salt)

    def _id(match: re.Match[str]) -> str:
        name = match.group(1)
        return f' id="{prefix}-{name}"' if name in referenced else ""

    text = _ID.sub(_id, text)
    text = _REFERENCE.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", text)
    text = re.sub(r"\n\s*", "\n", text)
    opening = _SVG_OPEN.search(text)
    assert opening is not None
    attributes = (
        f'<svg class="xpeval-chart" data-kind="{escape(kind)}" data-source="{escape(source)}" role="img" '
        f'aria-label="{escape(title)}" style="max-width:100%;height:auto"'
    )
    root = opening.group(0).replace("<svg", attributes, 1)
    return text[: opening.start()] + root + f"<title>{escape(title)}</title>" + text[opening.end() :]


def literal(text: object) -> str:
    """`text` as matplotlib is to draw it: every `$` escaped, so no label, title or legend entry
    ever goes through the math parser (a model named `gpt-$\\nosuchcmd{$` would otherwise stop
    the whole report). Only for strings handed to matplotlib: the page's HTML shows values as
    they are, escaped for HTML (`figure_svg` also keeps TeX off)."""
    return str(text).replace("$", r"\$")


def _sources(table: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """The table's rows per source, in `SOURCE_ORDER` (unknown sources after)."""
    present = [str(s) for s in pd.unique(table["source"].astype(str))]
    ordered = [s for s in SOURCE_ORDER if s in present] + sorted(s for s in present if s not in SOURCE_ORDER)
    for source in ordered:
        yield source, table[table["source"].astype(str) == source]


def row_label(adapter: object, model: object, source: str, recorded: object = "") -> str:
    """`adapter · model`, with when it was recorded (cassette) or that it is pipeline only."""
    label = f"{adapter} · {model}"
    if source == "cassette" and isinstance(recorded, str) and recorded:
        label += f" (rec. {recorded})"
    if source == "emulated":
        label += " [pipeline only]"
    return label


def _mark_pipeline_only(ax: Axes) -> None:
    ax.text(
        0.5,
        0.5,
        PIPELINE_ONLY,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=34,
        color="#000000",
        alpha=0.12,
        rotation=12,
        fontweight="bold",
        zorder=5,
    )


def _bar_style(source: str) -> dict[str, Any]:
    colour = SOURCE_COLOURS.get(source, "#555555")
    if source == "emulated":
        return {"color": "#d9d9d9", "edgecolor": "#7a7a7a", "hatch": "//", "linewidth": 0.8}
    return {"color": colour, "edgecolor": colour, "linewidth": 0.8}


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.0%}"


def accuracy_charts(card: pd.DataFrame, metric: str = "accuracy") -> list[Chart]:
    """Per source: one bar per adapter and model with its Wilson 95 % interval (`card` is
    `xpeval.evals.verdict.scorecard.scorecard(frame)`; `metric` any of its rates)."""
    charts = []
    what = metric.replace("_", " ")
    for source, part in _sources(card):
        rows = part.reset_index(drop=True)
        figure = Figure(figsize=(9, 1.3 + 0.36 * len(rows)))
        ax = figure.add_subplot()
        y = np.arange(len(rows))
        values = rows[metric].to_numpy(dtype=float)
        low, high = rows[f"{metric}_lo"].to_numpy(dtype=float), rows[f"{metric}_hi"].to_numpy(dtype=float)
        shown = np.nan_to_num(values)
        error = np.vstack([np.nan_to_num(values - low), np.nan_to_num(high - values)])
        ax.barh(
            y,
            shown,
            xerr=error,
            capsize=3,
            error_kw={"ecolor": "#222222", "elinewidth": 1},
            height=0.62,
            **_bar_style(source),
        )
        for i, record in rows.iterrows():
            k, n = int(record[f"{metric}_k"]), int(record[f"{metric}_n"])
            text = (
                "no episodes" if n == 0 else f"{_pct(values[i])} [{_pct(low[i])}, {_pct(high[i])}]  {k}/{n}"
            )
            ax.text(1.03, i, text, va="center", fontsize=8.5)
        labels = [
            literal(row_label(r.adapter, r.model, source, getattr(r, "recorded", "")))
            for r in rows.itertuples()
        ]
        ax.set_yticks(y, labels, fontsize=9)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, 1.42)
        ax.set_xticks(np.linspace(0, 1, 6))
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_xlabel(literal(f"{what} (bars: rate; whiskers: Wilson 95 % interval)"), fontsize=9)
        title = chart_title(f"{what.capitalize()} per adapter and model", source)
        ax.set_title(literal(title), fontsize=11, loc="left")
        if source == "emulated":
            _mark_pipeline_only(ax)
        charts.append(Chart("accuracy", source, title, source_caption(source), figure, key=metric))
    return charts


def _category_order(present: list[str]) -> list[str]:
    known = [c for c in CATEGORIES if c in present]
    return known + sorted(c for c in present if c not in CATEGORIES)


def category_charts(categories: pd.DataFrame) -> list[Chart]:
    """Per source: a heatmap of accuracy, one row per adapter and model, one column per
    category, each cell `rate` and `k/n` (`categories` is
    `xpeval.evals.verdict.scorecard.by_category(frame)`)."""
    charts = []
    for source, part in _sources(categories):
        keys = list(dict.fromkeys(zip(part["adapter"], part["model"], strict=True)))
        columns = _category_order([str(c) for c in part["category"].unique()])
        values = np.full((len(keys), len(columns)), np.nan)
        counts: dict[tuple[int, int], tuple[int, int]] = {}
        for record in part.itertuples():
            i, j = keys.index((record.adapter, record.model)), columns.index(str(record.category))
            values[i, j] = float(record.accuracy)
            counts[(i, j)] = (int(record.accuracy_k), int(record.accuracy_n))
        figure = Figure(figsize=(max(7.0, 2.6 + 1.05 * len(columns)), 1.5 + 0.42 * len(keys)))
        ax = figure.add_subplot()
        emulated = source == "emulated"
        # An emulated cell is a perfect model's replay: pale grey, never a colour scale that reads
        # like a measured quality.
        cmap = EMULATED_CMAP if emulated else "viridis"
        mesh = ax.pcolormesh(
            np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=1, edgecolors="white", linewidth=1.5
        )
        for (i, j), (k, n) in counts.items():
            value = values[i, j]
            dark = not emulated and value < 0.55
            ax.text(
                j + 0.5,
                i + 0.5,
                f"{_pct(value)}\n{k}/{n}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
        ax.set_xticks(
            np.arange(len(columns)) + 0.5,
            [literal(c.replace("_", " ")) for c in columns],
            fontsize=9,
            rotation=20,
            ha="right",
        )
        ax.set_yticks(
            np.arange(len(keys)) + 0.5, [literal(row_label(a, m, source)) for a, m in keys], fontsize=9
        )
        ax.set_ylim(len(keys), 0)
        ax.tick_params(length=0)
        ax.spines[:].set_visible(False)
        colourbar = figure.colorbar(mesh, ax=ax, fraction=0.035, pad=0.02, format=PercentFormatter(1.0))
        colourbar.set_label("accuracy", fontsize=9)
        title = chart_title("Accuracy per category", source)
        ax.set_title(literal(title), fontsize=11, loc="left")
        if source == "emulated":
            _mark_pipeline_only(ax)
        charts.append(Chart("categories", source, title, source_caption(source), figure))
    return charts


SCHEMA_VERDICTS = (("as-is", "#009E73"), ("rewritten", "#E69F00"), ("refused", "#D55E00"))


def schema_chart(pairs: pd.DataFrame | None) -> Chart | None:
    """Stacked bars per adapter: how many schemas it sends as-is, rewritten, or refuses (`pairs`
    is `xpeval.evals.acceptance.table.pairs_frame(...)`, or reports/schema_acceptance.csv read back:
    only `adapter`, `schema` and `verdict` are needed). None when there are no pairs."""
    if pairs is None or pairs.empty:
        return None
    counts = pairs.groupby(["adapter", "verdict"], sort=False).size().unstack(fill_value=0)
    counts = counts.reindex(
        index=pd.unique(pairs["adapter"]), columns=[v for v, _ in SCHEMA_VERDICTS], fill_value=0
    )
    schemas = int(pairs["schema"].nunique()) if "schema" in pairs else int(counts.sum(axis=1).max())
    figure = Figure(figsize=(9, 1.6 + 0.36 * len(counts)))
    ax = figure.add_subplot()
    y = np.arange(len(counts))
    left = np.zeros(len(counts))
    for verdict, colour in SCHEMA_VERDICTS:
        widths = counts[verdict].to_numpy(dtype=float)
        ax.barh(
            y, widths, left=left, color=colour, height=0.62, label=verdict, edgecolor="white", linewidth=0.6
        )
        for i, width in enumerate(widths):
            if width >= max(1.0, 0.04 * schemas):
                ax.text(
                    left[i] + width / 2,
                    i,
                    str(int(width)),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if verdict != "rewritten" else "black",
                )
        left += widths
    ax.set_yticks(y, [literal(a) for a in counts.index], fontsize=9)
    ax.set_ylim(len(counts) - 0.5, -0.5)
    ax.set_xlabel(f"tools ({schemas} measured)", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(
        ncols=3,
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        frameon=False,
        fontsize=9,
        title=f"source: {SCHEMA_SOURCE} (published rules, no provider called)",
        title_fontsize=9,
        alignment="left",
    )
    title = chart_title("Schema acceptance per adapter", SCHEMA_SOURCE)
    ax.set_title(title, fontsize=11, loc="left", pad=42)
    return Chart("schema", SCHEMA_SOURCE, title, source_caption(SCHEMA_SOURCE), figure)


def answered_in_run(frame: pd.DataFrame) -> pd.DataFrame:
    """The episodes answered during the run (not replayed from a recording), with a latency:
    the only ones whose time says something (`xpeval.evals.verdict.scorecard` counts the same ones)."""
    return frame[frame["recorded_at"].isna() & frame["latency_s"].notna()]


def latency_note(frame: pd.DataFrame) -> str | None:
    """Why some or all episodes have no latency plot; None when every episode has one."""
    answered = len(answered_in_run(frame))
    replayed = int(frame["recorded_at"].notna().sum())
    if replayed == 0:
        return None
    if answered == 0:
        return (
            f"No latency to show: all {replayed} episodes were replayed from recordings, and a "
            "replay's time says nothing about the model."
        )
    return (
        f"{replayed} of {len(frame)} episodes were replayed from recordings and are left out: a replay's "
        "time says nothing about the model."
    )


def latency_charts(frame: pd.DataFrame) -> list[Chart]:
    """Per source: the distribution of seconds per episode for each adapter and model (box:
    quartiles; whiskers: 5th to 95th percentile; labels: p50 and p95), only for episodes
    answered in the run (`answered_in_run`). Empty when there are none (`latency_note` says why)."""
    answered = answered_in_run(frame)
    charts = []
    for source, part in _sources(answered):
        groups = [
            (key, group["latency_s"].to_numpy(dtype=float))
            for key, group in part.groupby(["adapter", "model"], sort=False)
        ]
        figure = Figure(figsize=(9, 1.4 + 0.42 * len(groups)))
        ax = figure.add_subplot()
        style = _bar_style(source)
        ax.boxplot(
            [seconds for _, seconds in groups],
            orientation="horizontal",
            whis=(5, 95),
            showfliers=True,
            widths=0.55,
            patch_artist=True,
            boxprops={"facecolor": style["color"], "edgecolor": "#333333", "hatch": style.get("hatch")},
            medianprops={"color": "#000000"},
            flierprops={"markersize": 3},
        )
        top = max(float(np.max(seconds)) for _, seconds in groups)
        low = min(float(np.min(seconds)) for _, seconds in groups)
        logarithmic = low > 0 and top / low > 50
        if logarithmic:
            ax.set_xscale("log")
        for i, (_, seconds) in enumerate(groups, start=1):
            p50, p95 = np.quantile(seconds, [0.5, 0.95])
            ax.annotate(
                f"p50 {p50:.3g} s · p95 {p95:.3g} s · n={len(seconds)}",
                (1.01, i),
                xycoords=("axes fraction", "data"),
                va="center",
                fontsize=8.5,
            )
        ax.set_yticks(
            range(1, len(groups) + 1), [literal(row_label(a, m, source)) for (a, m), _ in groups], fontsize=9
        )
        ax.set_ylim(len(groups) + 0.5, 0.5)
        ax.set_xlabel("seconds per episode" + (" (log scale)" if logarithmic else ""), fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
        what = "Latency, episodes answered in this run"
        if source == "emulated":
            what = "Latency of the emulator round trip"
            _mark_pipeline_only(ax)
        title = chart_title(what, source)
        ax.set_title(literal(title), fontsize=11, loc="left")
        charts.append(Chart("latency", source, title, source_caption(source), figure))
    return charts


def check_trend(history: pd.DataFrame) -> pd.DataFrame:
    """The trend frame with `run_date` as (naive UTC) datetimes; ValueError naming any missing column."""
    missing = [c for c in TREND_COLUMNS if c not in history.columns]
    if missing:
        raise ValueError(
            f"the history frame has no column {', '.join(missing)} (expected {', '.join(TREND_COLUMNS)})"
        )
    dates = pd.to_datetime(history["run_date"].astype(str), utc=True, format="ISO8601")
    return history.assign(run_date=dates.dt.tz_convert(None))


def history_charts(history: pd.DataFrame | None, metric: str = "accuracy") -> list[Chart]:
    """Per source: `metric` over time, one line per adapter and model, each point with its Wilson
    interval (`history` has the columns of `TREND_COLUMNS`; none or empty: no charts)."""
    if history is None or history.empty:
        return []
    trend = check_trend(history)
    trend = trend[trend["metric"] == metric]
    charts = []
    what = metric.replace("_", " ")
    for source, part in _sources(trend):
        figure = Figure(figsize=(9, 4.2))
        ax = figure.add_subplot()
        for (adapter, model), series in part.groupby(["adapter", "model"], sort=False):
            series = series.sort_values("run_date")
            rate = series["rate"].to_numpy(dtype=float)
            error = np.vstack(
                [
                    np.nan_to_num(rate - series["lo"].to_numpy(dtype=float)),
                    np.nan_to_num(series["hi"].to_numpy(dtype=float) - rate),
                ]
            )
            ax.errorbar(
                series["run_date"].to_numpy(),
                rate,
                yerr=error,
                marker="o",
                markersize=4,
                capsize=2,
                linewidth=1.4,
                elinewidth=0.8,
                label=literal(row_label(adapter, model, source)),
                linestyle="--" if source == "emulated" else "-",
            )
        ax.set_ylim(-0.02, 1.02)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        locator = AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        ax.set_ylabel(literal(f"{what} (whiskers: Wilson 95 %)"), fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            frameon=False,
            fontsize=8,
            title=literal(f"source: {source}"),
            title_fontsize=9,
            alignment="left",
        )
        title = chart_title(f"{what.capitalize()} over time", source)
        ax.set_title(literal(title), fontsize=11, loc="left")
        if source == "emulated":
            _mark_pipeline_only(ax)
        charts.append(Chart("history", source, title, source_caption(source), figure, key=metric))
    return charts
