"""The report opened from disk (`file://`) in Debian's headless Chromium, with every host name
unresolvable: the charts are in the DOM, each with its source, the page's script ran, and the
screenshot is a drawn page, not a blank one.

Chromium is installed with `apt-get install -y chromium` when absent (`tests/report/chromium.py`).
When it cannot be had, CI (`CI` set) fails, since it must really render the report; elsewhere
the test is skipped with the reason.
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from tests.report import chromium as browser
from tests.report.conftest import SOURCES, schema_pairs, trend_frame, write_run
from xpeval.evals.report import CHART_SOURCES, write_report
from xpeval.evals.report.plots import SOURCE_COLOURS
from xpeval.evals.results.load import load_run

pytestmark = pytest.mark.slow

EXPECTED_CHARTS = (
    [("accuracy", s) for s in SOURCES]
    + [("categories", s) for s in SOURCES]
    + [("schema", "offline"), ("latency", "live"), ("latency", "local-model")]
    + [("history", s) for s in ("live", "local-model", "emulated")]
)
"""The synthetic run's charts: accuracy and categories per source, one schema chart, latency
for the two sources answered in the run, history for the trend frame's three sources."""


@pytest.fixture(scope="module")
def chromium() -> Path:
    return browser.require()


def _absent() -> browser.Found:
    return browser.Found(None, "apt-get install -y chromium failed (exit 100): E: Unable to locate package")


def test_without_chromium_ci_fails_and_elsewhere_the_test_is_skipped_with_the_reason() -> None:
    with pytest.raises(pytest.fail.Exception, match="Unable to locate package"):
        browser.require(_absent, {"CI": "true"})
    with pytest.raises(pytest.skip.Exception, match="needed to check that the report renders"):
        browser.require(_absent, {})


def test_chromium_is_installed_only_as_root_with_apt_get(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "_installed", lambda: None)
    monkeypatch.setattr(browser.os, "geteuid", lambda: 1000)
    assert "needs root" in browser.find_or_install().reason
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    assert "no apt-get" in browser.find_or_install().reason


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chromium")
    run = load_run(write_run(folder / "results.jsonl"))
    return write_report(folder / "report.html", run, pairs=schema_pairs(), history=trend_frame())


class _Dom(HTMLParser):
    """The charts (kind, source, their text), the episodes (case, hidden or not, the text of
    their case slot) and the filter's count, from a dumped DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.charts: list[dict[str, str]] = []
        self.episodes: list[dict[str, str]] = []
        self.count = ""
        self._chart: dict[str, str] | None = None
        self._in_count = False
        self._slot_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "svg" and "xpeval-chart" in a.get("class", "").split():
            self._chart = {"kind": a.get("data-kind", ""), "source": a.get("data-source", ""), "text": ""}
            self.charts.append(self._chart)
        self._in_count = a.get("id") == "ep-count"
        if tag == "details" and "ep" in a.get("class", "").split():
            self.episodes.append({"case": a.get("data-case", ""), "class": a.get("class", ""), "slot": ""})
        if tag == "div" and (self._slot_depth or a.get("class") == "ep-case"):
            self._slot_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._chart = None
        if tag == "span":
            self._in_count = False
        if tag == "div" and self._slot_depth:
            self._slot_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._chart is not None:
            self._chart["text"] += data + " "
        if self._in_count:
            self.count += data
        if self._slot_depth and self.episodes:
            self.episodes[-1]["slot"] += data


def _dom(chromium: Path, profile: Path, url: str) -> _Dom:
    done = browser.run(chromium, profile, "--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = _Dom()
    dom.feed(done.stdout)
    return dom


def test_the_report_renders_every_chart_with_its_source(chromium: Path, report: Path, tmp_path: Path) -> None:
    dom = _dom(chromium, tmp_path / "profile", report.as_uri())

    assert [(c["kind"], c["source"]) for c in dom.charts] == EXPECTED_CHARTS
    for chart in dom.charts:
        assert chart["source"] in CHART_SOURCES
        if chart["source"] == "emulated":
            assert "EMULATED: pipeline only" in chart["text"] and "PIPELINE ONLY" in chart["text"]
        else:
            assert f"source {chart['source']}" in chart["text"], chart["text"][:200]
    assert dom.count == "32 of 32 episodes shown"  # the page's script ran


def test_the_screenshot_is_a_drawn_page(chromium: Path, report: Path, tmp_path: Path) -> None:
    png = tmp_path / "report.png"

    done = browser.run(
        chromium, tmp_path / "profile", f"--screenshot={png}", "--window-size=1400,4000", report.as_uri()
    )

    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    pixels = (imread(png)[..., :3] * 255).round().astype(np.uint8).reshape(-1, 3)
    colours = Counter(map(tuple, pixels[:: max(1, len(pixels) // 400_000)]))
    assert len(colours) > 500, f"only {len(colours)} colours: a blank or unstyled page"
    (_, most), *_ = colours.most_common(1)
    assert most / sum(colours.values()) < 0.9, "the page is mostly one colour"
    # the local-model bars, drawn in their source's colour
    orange = np.array([int(SOURCE_COLOURS["local-model"][i : i + 2], 16) for i in (1, 3, 5)])
    assert int((np.abs(pixels.astype(int) - orange).sum(axis=1) < 12).sum()) > 2000


def test_the_episode_filter_and_case_copy_work_offline(chromium: Path, report: Path, tmp_path: Path) -> None:
    filtered = _dom(chromium, tmp_path / "one", report.as_uri() + "?filter=vienna+parallel&verdict=failures")

    shown = [e["case"] for e in filtered.episodes if "hidden" not in e["class"].split()]
    assert shown == ["weather_parallel_01", "weather_parallel_01"]  # live and local-model got it wrong
    assert filtered.count == "2 of 32 episodes shown"

    opened = report.with_name("opened.html")
    opened.write_text(
        report.read_text(encoding="utf-8").replace('<details class="ep"', '<details open class="ep"', 1),
        encoding="utf-8",
    )
    first = _dom(chromium, tmp_path / "two", opened.as_uri()).episodes[0]
    assert "tools offered" in first["slot"] and "expected" in first["slot"]  # the case copied in
