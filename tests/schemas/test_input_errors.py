"""What cannot be read is an input error - exit 2, one line naming the file and why - never a
row "refused by every adapter"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.schemas._cli import WEATHER_SCHEMA, schemas, write


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not JSON"),
        ("[]", "no tool in it (an empty list)"),
        ({"tools": []}, "no tool in it"),
        ([{"description": "x", "parameters": WEATHER_SCHEMA}], "a tool at [0] without a name"),
        ({"name": "", "input_schema": WEATHER_SCHEMA}, "without a name"),
        ({"type": "function", "function": {"name": "f", "parameters": []}}, '"parameters" is a JSON array'),
        ({"name": "a", "input_schema": "object"}, '"input_schema" is a JSON string'),
        ({"tools": [{"name": "m", "inputSchema": None}]}, '"inputSchema" is a JSON null'),
        ({"name": "x"}, "no schema"),
        ({"name": "x", "description": 3, "parameters": WEATHER_SCHEMA}, "description is a JSON number"),
        ("[1, 2]", "not a tool definition at [0]: a JSON number"),
        ("[" * 30_000 + "]" * 30_000, "containers nest deeper"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "No tools"}}, "No tools"),
        ([{"type": "web_search"}], "only built-in tools"),
    ],
    ids=[
        "not-json", "empty-list", "empty-tools-list", "no-name", "blank-name", "parameters-not-object",
        "input-schema-string", "input-schema-null", "no-schema", "description-number", "list-of-numbers",
        "deep-lists", "json-rpc-error", "only-built-ins",
    ],
)  # fmt: skip
def test_an_unreadable_tools_file_exits_2_naming_the_file_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, why: str
) -> None:
    path = write(tmp_path / "tools.json", content)
    code, lines, _, err = schemas(capsys, "--json", "--no-fidelity", "--tools", str(path))
    assert code == 2 and lines == []
    [line] = err.strip().splitlines()
    assert line.startswith(f"xpeval: {path}: ") and why in line, line
    assert "Traceback" not in err


def test_every_unreadable_file_of_a_folder_is_named_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "good.json", {"name": "good", "parameters": WEATHER_SCHEMA})
    write(tmp_path / "broken.json", "{")
    write(tmp_path / "sub" / "empty.json", [])
    code, lines, _, err = schemas(capsys, "--json", "--no-fidelity", "--tools", str(tmp_path))
    assert code == 2 and lines == []
    assert err.strip().splitlines() == [
        f"xpeval: {tmp_path / 'broken.json'}: not JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1))",
        f"{tmp_path / 'sub' / 'empty.json'}: no tool in it (an empty list)",
    ]


def test_a_folder_with_no_json_file_and_a_missing_path_are_input_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "README.md").write_text("no tools here")
    code, _, _, err = schemas(capsys, "--json", "--tools", str(tmp_path))
    assert code == 2 and err.strip() == f"xpeval: {tmp_path}: no tool file (*.json) in this folder"
    code, _, _, err = schemas(capsys, "--json", "--tools", str(tmp_path / "absent.json"))
    assert code == 2 and err.strip() == f"xpeval: {tmp_path / 'absent.json'}: no such file or folder"


def test_two_tools_of_one_name_in_a_file_are_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = {"name": "same", "inputSchema": WEATHER_SCHEMA}
    path = write(tmp_path / "dup.json", {"tools": [tool, tool]})
    code, _, _, err = schemas(capsys, "--json", "--tools", str(path))
    assert code == 2 and f"{path}: two tools give the row 'dup#same'" in err
