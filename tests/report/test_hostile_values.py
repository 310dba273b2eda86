"""`xpeval report` on values written to attack it: markup in any value of a results file (rows,
header, a hand-edited `truncated[].bytes`) never becomes an element or an event handler on the
page, and matplotlib math markup in a model, adapter, category or source name is drawn as text,
not parsed (one bad name would otherwise stop the whole report)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from tests._case_digests import builtin_digests
from tests._cli import Cli
from tests.gate._rows import row
from xpeval.evals.report.html import SCRIPT
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import CallRecord, ResultRow, RunHeader, Truncation
from xpeval.evals.results.run_plan import CASE_DIGESTS, RunPlan

MARKUP = "<img src=x onerror=alert(1)>"
BREAKOUT = "\"'><img src=x onerror=alert(2)>"
"""Closes a quoted attribute first (case ids sit in `id`, `href` and `data-case` attributes)."""
MATH = "gpt-$\\nosuchcmd{$"
"""Unbalanced math markup with an unknown command: matplotlib's math parser raises on it."""


def _row(case_id: str, *, adapter: str, model: str, category: str, correct: bool) -> ResultRow:
    """A gate test's row with every free-text value an attack."""
    plain = row(case_id, correct, adapter=adapter, model=model, category=category, source="live")
    return plain.model_copy(
        update={
            "run": "run-1",
            "irrelevance": False,
            "reason": None if correct else f"wrong arguments {MARKUP}",
            "calls": [
                CallRecord(turn=0, id="c1", name=MARKUP, arguments={MARKUP: MARKUP}, parse_error=MARKUP)
            ],
            "error_kind": None if correct else MARKUP,
            "error_type": MARKUP,
            "error_message": MARKUP,
            "latency_s": 0.25,
            "started_at": "2026-12-01T03:00:01+00:00",
            "text": MARKUP,
            "refusal": MARKUP,
            "truncated": [Truncation(field=MARKUP, bytes=5000, sha256="0" * 64)],
        }
    )


def _results(path: Path, *, adapter: str, model: str, category: str, source: str, run: str) -> Path:
    """A finished run of two episodes whose every free value is `adapter`/`model`/... as given."""
    cases = [f"{model}-{category}-1", f"{model}-{category}-2"]
    header = RunHeader(
        run=run,
        fingerprint="0" * 16,
        started_at=MARKUP,
        config={"mode": MARKUP, "case_set": "builtin", CASE_DIGESTS: builtin_digests(cases)},
        plan=RunPlan(cases=cases, models={adapter: [model]}),
    )
    results = ResultsFile.open_for(path, header)
    for index, case_id in enumerate(cases):
        row = _row(case_id, adapter=adapter, model=model, category=category, correct=index == 0)
        results.append(row.model_copy(update={"run": run}))
    results.finish()
    # What no writer of xpeval produces but an editor (or another CI job) can: a value of the
    # wrong type where the page shows a number, and a source the row model does not know.
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        record = json.loads(line)
        if record.get("type") == "result":
            record["truncated"][0]["bytes"] = MARKUP
            record["source"] = source
            lines[number] = json.dumps(record, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class _Elements(HTMLParser):
    """Every element and attribute name a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def test_markup_in_any_value_of_a_results_file_stays_text_on_the_page(cli: Cli, tmp_path: Path) -> None:
    results = _results(
        tmp_path / "r.jsonl", adapter=MARKUP, model=BREAKOUT, category=MARKUP, source="live", run=MARKUP
    )
    pairs = pd.DataFrame([{"adapter": MARKUP, "schema": MARKUP, "verdict": "as-is", "lost": 0}])
    pairs.to_csv(tmp_path / "schema.csv", index=False)
    out = tmp_path / "report.html"

    done = cli(
        "report", "--results", str(results), "--schema-csv", str(tmp_path / "schema.csv"), "--out", str(out)
    )

    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    elements = _Elements()
    elements.feed(page)
    assert "img" not in elements.tags
    assert [a for a in elements.attributes if a.startswith("on")] == []
    assert elements.scripts == [SCRIPT], "the page's own script is its only one"
    assert "(&lt;img src=x onerror=alert(1)&gt; bytes)" in page, "the cut value's size is shown as text"


def test_a_row_of_a_source_xpeval_does_not_know_is_refused_in_one_line(cli: Cli, tmp_path: Path) -> None:
    results = _results(
        tmp_path / "r.jsonl", adapter="a", model="m", category="simple", source=MARKUP, run="r"
    )
    out = tmp_path / "report.html"

    done = cli("report", "--results", str(results), "--out", str(out))

    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and str(results) in done.stderr
    assert not out.exists()


def _math_store(tmp_path: Path) -> Path:
    trend = pd.DataFrame(
        [
            {
                "run_date": day,
                "run": f"run-{day}",
                "source": "live",
                "adapter": "x$\\frac{$",
                "model": MATH,
                "metric": "accuracy",
                "k": 1,
                "n": 2,
                "rate": 0.5,
                "lo": 0.1,
                "hi": 0.9,
            }
            for day in ("2026-11-30", "2026-12-01")
        ]
    )
    path = tmp_path / "trend.parquet"
    trend.to_parquet(path, index=False)
    return path


def test_math_markup_in_a_name_is_drawn_as_text_not_parsed(cli: Cli, tmp_path: Path) -> None:
    results = _results(
        tmp_path / "r.jsonl",
        adapter="x$\\frac{$",
        model=MATH,
        category="multi$\\_$turn",
        source="live",
        run="r",
    )
    pairs = pd.DataFrame([{"adapter": "$\\sqrt{$", "schema": "s", "verdict": "as-is", "lost": 0}])
    pairs.to_csv(tmp_path / "schema.csv", index=False)
    out = tmp_path / "report.html"

    done = cli(
        "report",
        "--results",
        str(results),
        "--schema-csv",
        str(tmp_path / "schema.csv"),
        "--history",
        str(_math_store(tmp_path)),
        "--out",
        str(out),
    )

    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    svgs = page.count('<svg class="xpeval-chart"')
    assert svgs >= 5, "accuracy, categories, latency, schema and history charts were all drawn"
    # svg.fonttype none keeps text as text: the names are on the charts as written
    assert f"x$\\frac{{$ · {MATH}" in page
    assert "multi$\\_$turn" in page and "$\\sqrt{$" in page
