"""The history store: one Parquet file per run under date=YYYY-MM-DD, read back as one frame."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.history._runs import loaded
from xpeval.errors import UserError
from xpeval.evals.results.history import (
    HISTORY_COLUMNS,
    SCHEMA_TABLE,
    append,
    file_name,
    last_good,
    load_history,
    load_schema_history,
    runs,
)
from xpeval.evals.results.load import FRAME_COLUMNS


def test_a_run_lands_in_its_date_partition_with_the_run_columns(tmp_path: Path) -> None:
    run = loaded("2026-12-02T03:00:00+00:00-aaaa", [True, False, True], started="2026-12-02T03:00:00+00:00")
    path = append(tmp_path, run, kind="nightly", passed=True)

    assert path == tmp_path / "date=2026-12-02" / file_name("2026-12-02T03:00:00+00:00-aaaa")
    history = load_history(tmp_path)
    assert list(history.columns) == HISTORY_COLUMNS
    assert set(FRAME_COLUMNS) < set(HISTORY_COLUMNS)
    assert len(history) == 3
    assert set(history["run"]) == {"2026-12-02T03:00:00+00:00-aaaa"}
    assert set(history["run_date"]) == {pd.Timestamp("2026-12-02")}
    assert set(history["kind"]) == {"nightly"} and set(history["case_set"]) == {"builtin"}
    assert history["passed"].all()
    assert history["correct"].tolist() == [True, False, True]


def test_file_names_carry_nothing_an_artifact_upload_refuses() -> None:
    name = file_name("2026-12-02T03:00:00+00:00-1a2b3c4d")
    assert name.startswith("2026-12-02T03-00-00-00-00-1a2b3c4d-") and name.endswith(".parquet")
    assert not set(name) & set(':"<>|*?\r\n/\\')
    assert file_name("plain-id_1.2") == "plain-id_1.2.parquet", "an id that is already safe is its name"


def test_ids_that_differ_only_in_replaced_characters_get_two_files() -> None:
    assert file_name("2026-12-02T03:00:00+00:00-a") != file_name("2026-12-02T03-00-00-00-00-a")
    assert file_name("a:b") != file_name("a+b")


def test_filters_by_adapter_date_and_kind(tmp_path: Path) -> None:
    append(
        tmp_path,
        loaded("r1", [True], adapter="mimo", started="2026-11-30T01:00:00+00:00"),
        kind="run",
        passed=True,
    )
    append(
        tmp_path,
        loaded("r2", [False], adapter="moonshot", started="2026-12-01T01:00:00+00:00"),
        kind="nightly",
        passed=False,
    )
    append(
        tmp_path,
        loaded("r3", [True, True], adapter="mimo", started="2026-12-02T01:00:00+00:00"),
        kind="nightly",
        passed=True,
    )

    assert load_history(tmp_path, adapter="mimo")["run"].unique().tolist() == ["r1", "r3"]
    assert load_history(tmp_path, since="2026-12-01")["run"].unique().tolist() == ["r2", "r3"]
    assert load_history(tmp_path, kind="nightly", adapter="mimo")["run"].unique().tolist() == ["r3"]
    table = runs(load_history(tmp_path))
    assert table["run"].tolist() == ["r1", "r2", "r3"]
    assert table["episodes"].tolist() == [1, 1, 2]


def test_the_last_good_nightly_is_the_latest_that_passed(tmp_path: Path) -> None:
    assert last_good(tmp_path) is None
    append(
        tmp_path,
        loaded("2026-12-01T03:00:00+00:00-a", [True], started="2026-12-01T03:00:00+00:00"),
        kind="nightly",
        passed=True,
    )
    append(
        tmp_path,
        loaded("2026-12-02T03:00:00+00:00-b", [False], started="2026-12-02T03:00:00+00:00"),
        kind="nightly",
        passed=False,
    )
    append(
        tmp_path,
        loaded("2026-12-03T03:00:00+00:00-c", [True], started="2026-12-03T03:00:00+00:00"),
        kind="run",
        passed=True,
    )

    assert last_good(tmp_path) == "2026-12-01T03:00:00+00:00-a"
    assert last_good(tmp_path, kind="run") == "2026-12-03T03:00:00+00:00-c"


def test_appending_a_run_again_replaces_its_file(tmp_path: Path) -> None:
    append(tmp_path, loaded("r", [True, True]), kind="nightly", passed=True)
    append(tmp_path, loaded("r", [True, True]), kind="nightly", passed=False)

    history = load_history(tmp_path)
    assert len(history) == 2 and not history["passed"].any()


def test_temporary_and_foreign_entries_are_not_runs(tmp_path: Path) -> None:
    append(tmp_path, loaded("r", [True]), kind="nightly", passed=True)
    partition = tmp_path / "date=2026-12-01"
    (partition / ".r.parquet.123.abcd.tmp").write_bytes(b"PAR1 half a file")
    (partition / "notes.txt").write_text("not a run")
    (tmp_path / "somewhere-else").mkdir()

    assert load_history(tmp_path)["run"].tolist() == ["r"]


def test_an_incomplete_run_is_refused(tmp_path: Path) -> None:
    run = loaded("r", [True])
    run.complete = False
    with pytest.raises(UserError, match="did not finish"):
        append(tmp_path, run, kind="nightly", passed=True)
    assert load_history(tmp_path).empty


def test_an_empty_or_absent_store_is_an_empty_frame(tmp_path: Path) -> None:
    assert list(load_history(tmp_path / "nothing").columns) == HISTORY_COLUMNS
    assert load_history(tmp_path).empty
    assert load_schema_history(tmp_path).empty


def test_a_bad_date_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--since"):
        load_history(tmp_path, since="yesterday")


def test_schema_pairs_go_to_the_sibling_table(tmp_path: Path) -> None:
    pairs = pd.DataFrame(
        [
            {
                "adapter": "openai-chat",
                "model": "gpt",
                "schema": "basic/enum",
                "tool": "pick",
                "predicted": "accepted",
                "rules": "",
                "answer": "accepted",
                "status": 200,
                "message": None,
                "agrees": True,
            }
        ]
    )
    append(tmp_path, loaded("r", [True]), kind="nightly", passed=True, schema_pairs=pairs)

    assert (tmp_path / SCHEMA_TABLE / "date=2026-12-01" / "r.parquet").is_file()
    stored = load_schema_history(tmp_path)
    assert stored[["run", "adapter", "schema", "answer"]].values.tolist() == [
        ["r", "openai-chat", "basic/enum", "accepted"]
    ]
    assert len(load_history(tmp_path)) == 1, "the sibling table is not read as results"
