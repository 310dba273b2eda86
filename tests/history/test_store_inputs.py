"""What the history store refuses or reads once, through `xpeval history`: a file of another
schema, a run's file sitting in two date folders, a date folder that names no date, and two
identical runs started in the same second (two runs, neither replacing the other)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests._cli import Cli, Ran
from tests.history._runs import loaded
from xpeval.evals.results.history import append, load_history, runs


def _store(tmp_path: Path) -> tuple[Path, Path]:
    """A store with one run of two episodes (one correct), started 2026-12-01; and its file."""
    store = tmp_path / "history"
    path = append(store, loaded("r1", [True, False]), kind="run", passed=True)
    return store, path


def _records(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def _one_line_refusal(done: Ran, *named: str) -> str:
    returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    assert returncode == 2, (returncode, stdout, stderr)
    assert stdout == "", "nothing is printed as a trend from a store that was refused"
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    for name in named:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def _retyped(path: Path, into: Path) -> Path:
    """The run's file with its `passed` column stored as text."""
    table = pq.read_table(path)
    index = table.schema.get_field_index("passed")
    table = table.set_column(index, "passed", pa.array(["yes"] * len(table)))
    pq.write_table(table, into)
    return into


@pytest.mark.parametrize(
    "make",
    [
        lambda folder, _: pd.DataFrame({"x": [1, 2, 3]}).to_parquet(folder / "other.parquet"),
        lambda folder, run_file: _retyped(run_file, folder / "retyped.parquet"),
        lambda folder, _: (folder / "torn.parquet").write_bytes(b"PAR1 not really"),
    ],
    ids=["unrelated-columns", "a-column-of-another-type", "not-parquet"],
)
def test_a_file_of_another_schema_in_the_store_is_refused_naming_it(
    cli: Cli, tmp_path: Path, make: Callable[[Path, Path], object]
) -> None:
    store, run_file = _store(tmp_path)
    make(run_file.parent, run_file)
    foreign = next(p for p in run_file.parent.iterdir() if p != run_file)

    done = cli("history", "--store", str(store), "--metric", "all", "--json")

    _one_line_refusal(done, str(foreign))


def test_a_run_file_copied_into_another_date_folder_is_counted_once(cli: Cli, tmp_path: Path) -> None:
    store, run_file = _store(tmp_path)
    copy = store / "date=2026-12-05" / run_file.name
    copy.parent.mkdir()
    shutil.copy(run_file, copy)

    done = cli("history", "--store", str(store), "--json")

    assert done.returncode == 0, done.stderr
    assert [(r["run"], r["k"], r["n"]) for r in _records(done.stdout)] == [("r1", 1, 2)]


def test_a_run_is_dated_by_its_rows_not_by_the_folder_it_sits_in(cli: Cli, tmp_path: Path) -> None:
    store, run_file = _store(tmp_path)
    moved = store / "date=2026-11-01" / run_file.name
    moved.parent.mkdir()
    run_file.rename(moved)

    done = cli("history", "--store", str(store), "--json", "--since", "2026-12-01")

    assert done.returncode == 0, done.stderr
    assert [(r["run"], r["run_date"]) for r in _records(done.stdout)] == [("r1", "2026-12-01")]


def test_two_different_files_claiming_one_run_are_refused_naming_both(cli: Cli, tmp_path: Path) -> None:
    store, run_file = _store(tmp_path)
    other = append(tmp_path / "elsewhere", loaded("r1", [False, False]), kind="run", passed=False)
    impostor = store / "date=2026-12-05" / run_file.name
    impostor.parent.mkdir()
    shutil.copy(other, impostor)

    done = cli("history", "--store", str(store), "--json")

    line = _one_line_refusal(done, str(run_file), str(impostor))
    assert "r1" in line


@pytest.mark.parametrize("flags", [["--since", "2026-11-01"], []], ids=["since", "no-filter"])
def test_a_date_folder_that_names_no_date_is_one_line(cli: Cli, tmp_path: Path, flags: list[str]) -> None:
    store, run_file = _store(tmp_path)
    bad = store / "date=2026-13-45"
    bad.mkdir()
    shutil.copy(run_file, bad / run_file.name)

    done = cli("history", "--store", str(store), *flags)

    _one_line_refusal(done, str(bad))


def test_two_identical_runs_started_in_the_same_second_are_two_runs_in_the_store(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both runs start in the same second: the clock the run header reads is held still.
    monkeypatch.setattr("xpeval.evals.running.suite.now_iso", lambda: "2026-12-02T03:00:00+00:00")
    store = tmp_path / "history"
    ids = []
    for name in ("first", "second"):
        results = tmp_path / f"{name}.jsonl"
        ran = cli(
            "run",
            "--adapters",
            "mimo",
            "--cases",
            "weather_irrelevance_01",
            "--results",
            str(results),
            "--reports",
            str(tmp_path / name),
            "--no-progress",
        )
        assert results.is_file(), ran.stderr
        ids.append(json.loads(results.read_text(encoding="utf-8").splitlines()[0])["run"])
        done = cli("history", "--store", str(store), "--append", str(results))
        assert done.returncode == 0, done.stderr

    assert ids[0] != ids[1]
    assert all(run.startswith("2026-12-02T03:00:00+00:00-") for run in ids), "ids still start with the time"
    assert sorted(runs(load_history(store))["run"]) == sorted(ids), "the second append kept the first run"
    assert len(list(store.rglob("*.parquet"))) == 2


def test_the_report_refuses_a_store_with_a_file_of_another_schema_naming_it(cli: Cli, tmp_path: Path) -> None:
    from tests.report.conftest import write_run

    store, run_file = _store(tmp_path)
    foreign = run_file.parent / "other.parquet"
    pd.DataFrame({"x": [1, 2, 3]}).to_parquet(foreign)
    out = tmp_path / "report.html"

    done = cli(
        "report",
        "--results",
        str(write_run(tmp_path / "r.jsonl")),
        "--history",
        str(store),
        "--out",
        str(out),
    )

    _one_line_refusal(done, str(foreign))
    assert not out.exists()
