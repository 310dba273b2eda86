"""The page: self-contained, every number with its source, every episode with its case, the
calls, the verdict and the reason; failures first; large groups cut with a count."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.report.conftest import CASES, RUN, SOURCES, schema_pairs, trend_frame, write_run
from xpeval.errors import UserError
from xpeval.evals.cases import load_cases
from xpeval.evals.report import read_details, report_html, run_cases, write_report
from xpeval.evals.report.episodes import ordered_groups, verdict_of, verdicts
from xpeval.evals.results.load import load_run


class _Page(HTMLParser):
    """The elements of a page: tag, attributes and the text inside each `<details>`."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def _page(run_path: Path, **options: object) -> str:
    return report_html(load_run(run_path), pairs=schema_pairs(), history=trend_frame(), **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The whole page of the synthetic run, with the schema table and the history (built once:
    drawing every chart takes a second or two)."""
    return _page(write_run(tmp_path_factory.mktemp("page") / "results.jsonl"))


def test_the_page_fetches_nothing(page: str) -> None:
    parsed = _parse(page)

    for tag, attrs in parsed.elements:
        assert tag not in ("link", "iframe", "img", "object", "embed"), tag
        assert "src" not in attrs, (tag, attrs)
        href = attrs.get("href") or attrs.get("xlink:href")
        # within the page, or inlined (matplotlib rasterizes a colour bar's gradient into a PNG)
        assert href is None or href.startswith(("#", "data:image/png;base64,")), (tag, href[:40])
    assert not re.search(r"url\((?!#)", page) and "@import" not in page
    assert len(parsed.scripts) == 1 and "fetch(" not in parsed.scripts[0] and "XMLHttpRequest" not in page


def test_every_chart_is_on_the_page_and_labelled_with_its_source(page: str) -> None:
    parsed = _parse(page)

    charts = [
        attrs for tag, attrs in parsed.elements if tag == "svg" and attrs.get("class") == "xpeval-chart"
    ]
    kinds = [(c["data-kind"], c["data-source"]) for c in charts]
    assert kinds == [
        *(("accuracy", s) for s in SOURCES),
        *(("categories", s) for s in SOURCES),
        ("schema", "offline"),
        ("latency", "live"),
        ("latency", "local-model"),
        ("history", "live"),
        ("history", "local-model"),
        ("history", "emulated"),
    ]
    figures = [a for tag, a in parsed.elements if tag == "figure"]
    assert [f["data-source"] for f in figures] == [c["data-source"] for c in charts]


def test_the_scorecard_is_one_table_per_source_under_its_note(page: str) -> None:

    cards = re.findall(r'<div class="card" data-source="([^"]+)">(.*?)</div>', page)
    assert [source for source, _ in cards] == list(SOURCES)
    emulated = dict(cards)["emulated"]
    assert "EMULATED: checks the adapter pipeline only" in emulated and "mimo" in emulated
    assert "openai-chat" not in emulated
    assert "8 episodes are EMULATED" in page


def test_without_a_schema_table_or_history_the_page_says_what_to_run(run_path: Path) -> None:
    page = report_html(load_run(run_path))

    assert "No schema-acceptance table given: run <code>xpeval schemas</code>" in page
    assert "No history given" in page
    assert 'data-kind="schema"' not in page and 'data-kind="history"' not in page


def test_an_unfinished_run_is_reported_as_incomplete(tmp_path: Path) -> None:
    path = write_run(tmp_path / "partial.jsonl", finish=False)

    page = report_html(load_run(path))

    assert "INCOMPLETE: the run did not finish" in page
    assert "21 of 32 planned" in page


def test_each_episode_shows_its_case_calls_verdict_and_reason(page: str) -> None:

    episode = re.search(
        r'<details class="ep" data-verdict="error" data-case="calc_parallel_01">(.*?)</details>', page, re.S
    )
    assert episode is not None
    body = episode.group(1)
    assert "error: timeout" in body and "timeout after 60 s" in body
    assert "APITimeoutError: Request timed out." in body
    assert '<a href="#case-calc_parallel_01">' in body
    malformed = re.search(
        r'<details class="ep" data-verdict="malformed" data-case="calc_simple_01">(.*?)</details>', page
    )
    assert malformed is not None
    assert 'get_current_weather({"city": "Vienna", "n": 26})' in malformed.group(1)
    assert "unparsable arguments: Expecting &#x27;,&#x27; delimiter" in malformed.group(1) or (
        "unparsable arguments: Expecting ',' delimiter" in malformed.group(1)
    )
    assert "last text</b> <span" in malformed.group(1)


def test_each_case_is_written_once_with_its_messages_and_expected_calls(page: str) -> None:

    for case_id in CASES:
        assert page.count(f'id="case-{case_id}"') == 1
    builtin = {c.case.id: c.case for c in load_cases()}
    multi = re.search(r'<details class="case" id="case-weather_multi_turn_01">(.*?)</details>', page, re.S)
    assert multi is not None
    turns = re.findall(r"<h5>turn (\d+)</h5>", multi.group(1))
    assert turns == [str(t.index) for t in builtin["weather_multi_turn_01"].turns]
    first_user = next(m for m in builtin["weather_multi_turn_01"].messages if m.role == "user")
    assert first_user.content.split("\n")[0][:40] in multi.group(1).replace("&#x27;", "'")
    irrelevance = re.search(r'id="case-weather_irrelevance_01">(.*?)</details>', page, re.S)
    assert irrelevance is not None and "<b>expected</b> no call" in irrelevance.group(1)


def test_groups_come_per_source_adapter_and_model_with_failures_first(run_path: Path, page: str) -> None:
    frame = load_run(run_path).frame
    groups = ordered_groups(frame)

    assert [key[0] for key in (k for k, _ in groups)] == list(SOURCES)
    for _, group in groups:
        order = [verdict_of(r)[0] for r in group.to_dict("records")]
        ranks = ["error", "malformed", "incorrect", "correct"]
        assert order == sorted(order, key=ranks.index)
    live = re.search(
        r'<details class="ep-group" data-source="live">(.*?)</details>\s*<details class="ep-group"',
        page,
        re.S,
    )
    assert live is not None
    verdicts = re.findall(r'data-verdict="(\w+)"', live.group(1))
    assert verdicts[:2] == ["error", "incorrect"] and set(verdicts[2:]) == {"correct"}
    assert "6/8 correct, 2 not" in live.group(1)


def test_a_large_group_is_cut_failures_kept_and_the_rest_counted(run_path: Path) -> None:
    page = _page(run_path, max_per_group=3)

    live = re.search(
        r'<details class="ep-group" data-source="live">(.*?)<details class="ep-group"', page, re.S
    )
    assert live is not None
    assert len(re.findall(r'<details class="ep"', live.group(1))) == 3
    assert "5 more episodes of this group are not shown (0 of them not correct)" in live.group(1)


def test_details_come_from_the_final_rows_only(run_path: Path) -> None:
    with run_path.open("a", encoding="utf-8") as handle:
        handle.write('{"type":"result","final":true,"case_id":"torn"')  # a torn last line

    details = read_details(run_path)

    assert len(details) == 32
    retried = details[("weather_simple_01", "openai-chat", "gpt-4.1-mini")]
    assert retried.text == "final text of weather_simple_01 via openai-chat"
    assert read_details(run_path, [("calc_simple_01", "mimo", "mimo-v2-flash")]).keys() == {
        ("calc_simple_01", "mimo", "mimo-v2-flash")
    }


def test_the_cases_come_from_the_project_never_from_the_folder_a_header_names(tmp_path: Path) -> None:
    folder = tmp_path / "my-cases"
    folder.mkdir()
    source = next(c for c in load_cases() if c.case.id == "weather_simple_01")
    (folder / "one.jsonl").write_text(source.case.model_dump_json() + "\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.xpeval]\ncases = "my-cases"\n', encoding="utf-8")
    run = load_run(write_run(tmp_path / "results.jsonl"))
    run.header.config["case_set"] = "/"  # never read: the project says where its cases are

    cases, label = run_cases(run, root=tmp_path)

    assert [c.id for c in cases] == ["weather_simple_01"] and label == "my-cases"
    page = report_html(run, cases=cases)
    assert "case calc_simple_01 is not in the case set this page was built with" in page
    changed = source.case.model_copy(update={"origin": "edited"})
    (folder / "one.jsonl").write_text(changed.model_dump_json() + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="1 of its cases differ \\(weather_simple_01\\)"):
        run_cases(run, root=tmp_path)


def test_write_report_writes_the_page(tmp_path: Path, run_path: Path) -> None:
    out = write_report(tmp_path / "deep" / "report.html", load_run(run_path))

    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert RUN in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("verdict", ["error", "malformed", "incorrect", "correct"])
def test_every_verdict_has_its_style(verdict: str) -> None:
    from xpeval.evals.report.html import CSS

    assert f"details.ep[data-verdict={verdict}]" in CSS


def test_the_verdicts_of_a_frame_are_each_rows_verdict(run_path: Path) -> None:
    frame = load_run(run_path).frame

    assert list(verdicts(frame)) == [verdict_of(r)[0] for r in frame.to_dict("records")]
    assert set(verdicts(frame)) == {"error", "malformed", "incorrect", "correct"}


def test_details_find_a_row_whose_arguments_hold_key_like_text(tmp_path: Path) -> None:
    path = write_run(tmp_path / "results.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[3])  # (lines[1] is a retried attempt)
    # arguments named like the row's own fields, one value with a quote
    row["calls"] = [{"turn": 0, "id": None, "name": "t", "arguments": {"case_id": "other", "model": 'm"x'}}]
    lines[3] = json.dumps(row, separators=(",", ":")) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    key = (row["case_id"], row["adapter"], row["model"])

    details = read_details(path, [key])

    assert details[key].calls[0]["arguments"] == {"case_id": "other", "model": 'm"x'}
