"""`xpeval cases list`: what a user sees of a case folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import without_project_line
from xpeval.evals.cases import BUILTIN_DIR, load_cases
from xpeval.evals.cli import main


def test_list_json_gives_id_category_tools_and_file_of_every_builtin_case(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["cases", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(load_cases())
    assert all(set(row) == {"id", "category", "tools", "file"} for row in rows)
    assert all((BUILTIN_DIR / row["file"]).is_file() for row in rows)
    simple = next(row for row in rows if row["id"] == "weather_simple_01")
    assert simple == {
        "id": "weather_simple_01",
        "category": "simple",
        "tools": ["get_current_weather"],
        "file": "weather.yaml",
    }


def test_list_can_filter_by_category(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "list", "--json", "--categories", "approval,irrelevance"]) == 0
    assert {row["category"] for row in json.loads(capsys.readouterr().out)} == {"approval", "irrelevance"}
    assert main(["cases", "list", "--categories", "trivia"]) == 2
    assert "unknown category 'trivia'" in capsys.readouterr().err


def test_list_table_shows_the_case_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "list"]) == 0
    assert f"{len(load_cases())} cases in" in capsys.readouterr().out


def test_a_bad_case_file_fails_the_listing_with_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.yaml").write_text(
        "id: c1\ncategory: simple\nmessages: [{role: user, content: hi}]\nexpected: {calls: [{name: f}]}\n",
        encoding="utf-8",
    )
    assert main(["cases", "list", "--dir", str(tmp_path)]) == 2
    err = without_project_line(capsys.readouterr().err)
    assert err.startswith(
        "xpeval: mine.yaml: case 0 (c1): expected.calls[0].name: 'f' is not a tool of this case; "
        "its tools: none"
    )
    assert "Traceback" not in err
