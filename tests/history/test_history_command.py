"""`xpeval history`: the trend as a table or JSON lines, filtered; `--append` adds a run."""

from __future__ import annotations

import json
from pathlib import Path

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from tests.history._runs import loaded
from xpeval.evals.results.history import append, load_history, runs
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.trend import TREND_COLUMNS


def _store(tmp_path: Path) -> Path:
    append(
        tmp_path,
        loaded("r1", [True, False], adapter="mimo", started="2026-11-30T01:00:00+00:00"),
        kind="nightly",
        passed=True,
    )
    append(
        tmp_path,
        loaded("r2", [True, True], adapter="mimo", started="2026-12-01T01:00:00+00:00"),
        kind="nightly",
        passed=True,
    )
    append(
        tmp_path,
        loaded("r3", [False, False], adapter="moonshot", started="2026-12-01T02:00:00+00:00"),
        kind="run",
        passed=False,
    )
    return tmp_path


def test_the_trend_prints_as_a_table(cli: Cli, tmp_path: Path) -> None:
    done = cli("history", "--store", str(_store(tmp_path)))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == TREND_COLUMNS
    assert len(lines) == 4 and "2026-11-30" in lines[1] and "50.0%" in lines[1]


def test_json_lines_filtered_by_adapter_date_and_metric(cli: Cli, tmp_path: Path) -> None:
    store = _store(tmp_path)
    done = cli(
        "history",
        "--store",
        str(store),
        "--json",
        "--adapter",
        "mimo",
        "--since",
        "2026-12-01",
        "--metric",
        "tool_selection",
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["run"], r["run_date"], r["metric"], r["k"], r["n"]) for r in records] == [
        ("r2", "2026-12-01", "tool_selection", 2, 2)
    ]
    assert list(records[0]) == TREND_COLUMNS


def test_bad_input_is_one_line_and_exit_2(cli: Cli, tmp_path: Path) -> None:
    for flags in (["--since", "last week"], ["--metric", "vibes"]):
        done = cli("history", "--store", str(tmp_path), *flags)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def test_an_empty_store_says_so(cli: Cli, tmp_path: Path) -> None:
    done = cli("history", "--store", str(tmp_path / "none"))
    assert done.returncode == 0 and "no runs in" in done.stderr


def test_append_adds_a_finished_run_with_the_gates_verdict(cli: Cli, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    suite = SuiteConfig(
        adapters=("mimo",),
        categories=("irrelevance",),
        results=results,
        reports=tmp_path / "rep",
        cassettes=REPO_ROOT / "cassettes",
        root=REPO_ROOT,
    )
    run_suite(suite)
    done = cli("history", "--store", str(tmp_path / "h"), "--append", str(results))
    assert done.returncode == 0, done.stderr
    assert "(run, passed)" in done.stderr
    stored = runs(load_history(tmp_path / "h"))
    assert stored[["kind", "passed", "episodes"]].values.tolist() == [["run", True, 14]]
