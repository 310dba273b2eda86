"""`xpeval report`: the page from a results file, a schema csv and a history in Parquet; input
errors exit 2 with the file named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from tests.report.conftest import schema_pairs, trend_frame, write_run
from xpeval import SuiteConfig, run_suite
from xpeval.evals.cli import main


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an empty folder: this repository's reports/ must not leak into a default."""
    monkeypatch.chdir(tmp_path)


def _charts(page: Path) -> list[tuple[str, str]]:
    text = page.read_text(encoding="utf-8")
    return re.findall(r'<svg class="xpeval-chart" data-kind="([^"]+)" data-source="([^"]+)"', text)


def test_report_writes_the_page_from_a_run_a_schema_csv_and_a_history_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_run(tmp_path / "results.jsonl")
    schema_pairs().to_csv(tmp_path / "schema.csv", index=False)
    history = tmp_path / "history"
    history.mkdir()
    trend = trend_frame()
    # a folder of Parquet files, as a store appending one file per run would leave it
    for run, part in trend.groupby("run"):
        part.to_parquet(history / f"{run}.parquet", index=False)
    out = tmp_path / "out" / "report.html"

    code = main(
        [
            "report",
            "--results",
            str(results),
            "--schema-csv",
            str(tmp_path / "schema.csv"),
            "--history",
            str(history),
            "--out",
            str(out),
        ]
    )

    assert code == 0
    kinds = [kind for kind, _ in _charts(out)]
    assert kinds.count("schema") == 1 and kinds.count("history") == 3 and kinds.count("accuracy") == 4
    assert f"wrote {out}" in capsys.readouterr().err


def test_report_defaults_to_the_projects_reports_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    write_run(tmp_path / "reports" / "results.jsonl")
    schema_pairs().to_csv(tmp_path / "reports" / "schema_acceptance.csv", index=False)

    assert main(["report"]) == 0

    charts = _charts(tmp_path / "reports" / "report.html")
    assert ("schema", "offline") in charts and not any(kind == "history" for kind, _ in charts)


@pytest.mark.parametrize(
    ("option", "make", "message"),
    [
        ("--history", lambda p: p / "absent", "no history here"),
        ("--history", lambda p: _write(p / "h.parquet", b"not parquet"), "cannot read it as Parquet"),
        ("--history", lambda p: _trend_without_rate(p / "h.parquet"), "has no column rate"),
        ("--schema-csv", lambda p: _write(p / "s.csv", b"a,b\n1,2\n"), "not a schema-acceptance csv"),
        ("--schema-csv", lambda p: p / "absent.csv", "no schema-acceptance csv"),
        (
            "--schema-csv",
            lambda p: _write(p / "s.csv", b"adapter,verdict,lost\na,as-is,lots\n"),
            "column lost",
        ),
    ],
)
def test_unreadable_input_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, make: object, message: str
) -> None:
    results = write_run(tmp_path / "results.jsonl")
    path = make(tmp_path)  # type: ignore[operator]

    code = main(["report", "--results", str(results), option, str(path), "--out", str(tmp_path / "r.html")])

    assert code == 2
    error = capsys.readouterr().err
    assert str(path) in error and message in error
    assert not (tmp_path / "r.html").exists()


def test_a_missing_results_file_says_what_to_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--results", str(tmp_path / "none.jsonl")]) == 2
    assert "run `xpeval run` first" in capsys.readouterr().err


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _trend_without_rate(path: Path) -> Path:
    trend_frame().drop(columns=["rate"]).to_parquet(path)
    return path


def test_report_takes_the_history_store_that_history_append_writes(tmp_path: Path) -> None:
    """`nox -s conformance` appends each run to reports/history (episode rows) and `nox -s report`
    passes that folder on: the page draws its trend instead of refusing the store."""
    from tests.history._runs import loaded
    from xpeval.evals.results.history import append

    store = tmp_path / "history"
    append(store, loaded("run-1", [True, True, False, True]), kind="run", passed=True)
    append(
        store,
        loaded("run-2", [True, False, False, False], started="2026-12-02T03:00:00+00:00"),
        kind="run",
        passed=True,
    )
    out = tmp_path / "report.html"

    code = main(
        [
            "report",
            "--results",
            str(write_run(tmp_path / "r.jsonl")),
            "--history",
            str(store),
            "--out",
            str(out),
        ]
    )

    assert code == 0
    assert ("history", "local-model") in _charts(out)


def test_report_on_a_real_replayed_run(tmp_path: Path) -> None:
    """The committed cassettes of a local-model and an emulated adapter, replayed: no latency
    (every episode is a replay) and both sources drawn apart."""
    outcome = run_suite(
        SuiteConfig(
            adapters=("mimo", "openai-compatible"),
            categories=("irrelevance",),
            results=tmp_path / "r.jsonl",
            reports=tmp_path / "reports",
            cassettes=REPO_ROOT / "cassettes",
            root=REPO_ROOT,
            baseline=REPO_ROOT / "reports" / "baseline.json",
        )
    )
    assert outcome.passed
    out = tmp_path / "report.html"

    assert main(["report", "--results", str(tmp_path / "r.jsonl"), "--out", str(out)]) == 0

    page = out.read_text(encoding="utf-8")
    assert _charts(out) == [
        ("accuracy", "local-model"),
        ("accuracy", "emulated"),
        ("categories", "local-model"),
        ("categories", "emulated"),
    ]
    assert "No latency to show: all 42 episodes were replayed from recordings" in page
    assert page.count('<details class="ep" ') == 42
