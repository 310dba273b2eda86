"""BFCL import: pseudo-types become JSON Schema, entries become cases, refusals say why.

The samples here are BFCL-shaped but written for these tests; nothing is copied from BFCL.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import corpus_files, corpus_path
from tests._labelled import labelled
from xpeval.evals.cases import load_cases
from xpeval.evals.cases.bfcl import (
    CATEGORY_MAP,
    NOT_IMPORTED,
    BfclConversionError,
    convert_entry,
    convert_schema,
)
from xpeval.evals.cases.bfcl_data import BfclDataError, bfcl_data_dir, category_files, convert_category
from xpeval.evals.cli import main
from xpeval.evals.emulator.case_script import example_arguments
from xpeval.evals.verdict.scoring import score

PSEUDO_TYPED = {
    "type": "dict",
    "properties": {
        "ratio": {"type": "float", "description": "A ratio."},
        "point": {"type": "tuple", "items": {"type": "integer"}},
        "payload": {"type": "any"},
        "mapping": {"type": "HashMap"},
        "weird": {"type": "Decimal128"},
        "untyped": {"description": "no type given"},
        "rows": {"type": "array", "items": {"type": "array", "items": {"type": "float"}}},
        "owner": {
            "type": "dict",
            "properties": {
                "contacts": {
                    "type": "list",
                    "items": {
                        "type": "dict",
                        "properties": {
                            "phone": {"type": "String"},
                            "tags": {
                                "type": "array",
                                "items": {"type": "dict", "properties": {"weight": {"type": "double"}}},
                            },
                        },
                    },
                }
            },
        },
    },
    "required": ["ratio"],
    "optional": ["point"],
}


def test_pseudo_types_become_json_schema_types_at_every_depth() -> None:
    converted = convert_schema(PSEUDO_TYPED)
    properties = converted["properties"]
    assert converted["type"] == "object"
    assert properties["ratio"] == {"type": "number", "description": "A ratio."}
    assert properties["point"] == {"type": "array", "items": {"type": "integer"}}
    assert properties["payload"]["type"] == "string"
    assert properties["mapping"]["type"] == "object"
    assert properties["weird"]["type"] == "string"
    assert properties["untyped"] == {"type": "string", "description": "no type given"}
    assert properties["rows"]["items"]["items"]["type"] == "number"
    contact = properties["owner"]["properties"]["contacts"]["items"]
    assert properties["owner"]["properties"]["contacts"]["type"] == "array"
    assert contact["properties"]["phone"]["type"] == "string"
    assert contact["properties"]["tags"]["items"]["properties"]["weight"]["type"] == "number"
    # Everything that is not a type stays as it was, including BFCL's non-standard keywords.
    assert converted["required"] == ["ratio"] and converted["optional"] == ["point"]


def test_conversion_leaves_its_input_untouched() -> None:
    before = copy.deepcopy(PSEUDO_TYPED)
    convert_schema(PSEUDO_TYPED)
    assert before == PSEUDO_TYPED


@pytest.mark.corpus
@pytest.mark.parametrize("raw_path", corpus_files("schemas/bfcl-raw/*.json"), ids=lambda p: p.name)
def test_raw_corpus_schemas_convert_to_their_converted_counterparts(raw_path: Path) -> None:
    raw = json.loads(raw_path.read_text(encoding="utf-8"))
    converted = json.loads(corpus_path("schemas", "bfcl", raw_path.name).read_text(encoding="utf-8"))
    mine = convert_schema(raw["parameters"])
    mine["type"] = "object"
    assert mine == converted["parameters"]


# -- entries -> cases ----------------------------------------------------------------------------


def entry(entry_id: str, functions: list[dict[str, Any]], question: str = "Plan a route") -> dict[str, Any]:
    return {"id": entry_id, "question": [[{"role": "user", "content": question}]], "function": functions}


ROUTE = {
    "name": "maps.route",
    "description": "Route between towns.",
    "parameters": {
        "type": "dict",
        "properties": {"start": {"type": "string"}, "end": {"type": "string"}, "hours": {"type": "float"}},
        "required": ["start", "end"],
    },
}


def test_a_simple_entry_becomes_a_simple_case_with_its_answer() -> None:
    answer = {
        "id": "simple_python_7",
        "ground_truth": [
            {"maps.route": {"start": ["Ghent"], "end": ["Bruges", "Brugge"], "hours": [1.5, ""]}}
        ],
    }
    case = convert_entry(entry("simple_python_7", [ROUTE]), answer, "simple_python")
    assert (case.id, case.category, case.origin) == ("bfcl_simple_python_7", "simple", "bfcl:simple_python_7")
    assert (
        case.tools[0].name == "maps.route"
        and case.tools[0].parameters["properties"]["hours"]["type"] == "number"
    )
    assert score(case, [{"name": "maps.route", "arguments": {"start": "ghent", "end": "Brugge"}}]).correct


def test_parallel_entries_keep_every_expected_call() -> None:
    answer = {
        "id": "live_parallel_3",
        "ground_truth": [
            {"maps.route": {"start": ["Ghent"], "end": ["Bruges"]}},
            {"maps.route": {"start": ["Ghent"], "end": ["Antwerp"]}},
        ],
    }
    case = convert_entry(entry("live_parallel_3", [ROUTE]), answer, "live_parallel")
    assert case.category == "parallel" and len(labelled(case).calls) == 2


def test_irrelevance_entries_expect_no_call() -> None:
    case = convert_entry(entry("irrelevance_4", [ROUTE], "Sing me a song"), None, "irrelevance")
    assert case.category == "irrelevance" and labelled(case).no_call


def test_relevance_entries_pass_any_readable_call_and_fail_no_call() -> None:
    case = convert_entry(
        entry("live_relevance_2-2-0", [ROUTE], "Route me to the sea"), None, "live_relevance"
    )
    assert (case.category, labelled(case).any_call) == ("relevance", True)
    assert score(case, [{"name": "maps.route", "arguments": {"start": "x", "end": "y"}}]).correct
    assert score(case, [{"name": "maps.route", "arguments": {}}]).correct  # BFCL: any call that decodes
    nothing = score(case, [])
    assert not nothing.correct and nothing.reason == "expected a call of any tool, got none"
    unread = score(case, [{"name": "maps.route", "arguments": "{not json"}])
    assert not unread.correct and "unparseable" in (unread.reason or "")


def test_an_optional_answer_argument_outside_the_schema_is_dropped() -> None:
    answer = {
        "id": "multiple_9",
        "ground_truth": [{"maps.route": {"start": ["Ghent"], "end": ["Bruges"], "avoid_tolls": ["", True]}}],
    }
    case = convert_entry(entry("multiple_9", [ROUTE]), answer, "multiple")
    assert set(labelled(case).calls[0].arguments) == {"start", "end"}


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            {"ground_truth": [{"maps.route": {"start": ["Ghent", ""], "end": ["Bruges"]}}]},
            "cannot be optional",
        ),
        (
            {"ground_truth": [{"maps.route": {"start": ["Ghent"], "end": ["Bruges"], "via": ["Aalter"]}}]},
            "not in the schema",
        ),
        ({"ground_truth": [{"maps.route": {"start": [], "end": ["Bruges"]}}]}, "no acceptable value"),
        (None, "no possible answer"),
    ],
)
def test_an_inconsistent_entry_is_refused_with_its_reason(answer: dict[str, Any] | None, reason: str) -> None:
    with pytest.raises(BfclConversionError, match=reason):
        convert_entry(entry("simple_python_8", [ROUTE]), answer, "simple_python")


def test_every_bfcl_category_is_either_imported_or_refused_with_a_reason() -> None:
    assert set(CATEGORY_MAP.values()) == {
        "simple",
        "multiple",
        "parallel",
        "parallel_multiple",
        "irrelevance",
        "relevance",
        "multi_turn",
    }
    assert not set(CATEGORY_MAP) & set(NOT_IMPORTED)
    assert all(reason.strip() for reason in NOT_IMPORTED.values())


# -- the data folder -------------------------------------------------------------------------------


def fake_data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "bfcl_eval" / "data"
    (data / "possible_answer").mkdir(parents=True)
    entries = [entry("simple_python_0", [ROUTE]), entry("simple_python_1", [ROUTE])]
    answers = [
        {"id": "simple_python_0", "ground_truth": [{"maps.route": {"start": ["Ghent"], "end": ["Bruges"]}}]},
        {
            "id": "simple_python_1",
            "ground_truth": [{"maps.route": {"start": ["Ghent"], "end": ["Mars"], "via": ["x"]}}],
        },
    ]
    for name, rows in (
        ("BFCL_v4_simple_python.json", entries),
        ("possible_answer/BFCL_v4_simple_python.json", answers),
    ):
        (data / name).write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (data / "BFCL_v3_simple_python.json").write_text("", encoding="utf-8")
    (data / "BFCL_v4_live_irrelevance.json").write_text(
        json.dumps(entry("live_irrelevance_0", [], "hello")) + "\n", encoding="utf-8"
    )
    return data


def test_category_files_take_the_newest_version_and_exact_names(tmp_path: Path) -> None:
    data = fake_data_dir(tmp_path)
    files = category_files(data)
    assert files == {
        "live_irrelevance": data / "BFCL_v4_live_irrelevance.json",
        "simple_python": data / "BFCL_v4_simple_python.json",
    }


def test_converting_a_category_reports_each_skipped_entry(tmp_path: Path) -> None:
    outcomes = list(convert_category(fake_data_dir(tmp_path), "simple_python"))
    assert [o.entry_id for o in outcomes if o.case is not None] == ["simple_python_0"]
    (skipped,) = [o for o in outcomes if o.case is None]
    assert skipped.entry_id == "simple_python_1" and "via" in str(skipped.skipped)


def test_a_category_without_a_data_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BfclDataError, match="no data file for BFCL category 'parallel'"):
        list(convert_category(fake_data_dir(tmp_path), "parallel"))


def test_cli_without_bfcl_eval_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert main(["cases", "bfcl"]) == 2
    assert "pip install --no-deps bfcl-eval" in capsys.readouterr().err


def test_cli_refuses_categories_it_cannot_score_the_bfcl_way(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "bfcl", "--categories", "web_search"]) == 2
    assert "not imported: agentic category" in capsys.readouterr().err
    assert main(["cases", "bfcl", "--categories", "simple_pythonn"]) == 2
    assert "unknown BFCL category 'simple_pythonn'" in capsys.readouterr().err


def test_cli_writes_json_lines_that_load_back_as_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = fake_data_dir(tmp_path)
    monkeypatch.setattr("xpeval.evals.cases.bfcl_data.bfcl_data_dir", lambda: data)
    assert main(["cases", "bfcl", "--categories", "simple_python,live_irrelevance"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["bfcl_simple_python_0", "bfcl_live_irrelevance_0"]
    assert "skipped simple_python_1:" in captured.err
    out = tmp_path / "out"
    assert main(["cases", "bfcl", "--categories", "simple", "--out", str(out)]) == 2
    assert "no data file for BFCL category live_simple" in capsys.readouterr().err
    assert not out.exists()
    assert main(["cases", "bfcl", "--categories", "simple_python", "--out", str(out)]) == 0
    loaded = load_cases(out)
    assert [(item.case.id, item.file) for item in loaded] == [
        ("bfcl_simple_python_0", "bfcl_simple_python.jsonl")
    ]


# -- the installed package (optional) ---------------------------------------------------------------

needs_bfcl = pytest.mark.skipif(
    importlib.util.find_spec("bfcl_eval") is None,
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval)",
)


@needs_bfcl
@pytest.mark.slow
@pytest.mark.parametrize("bfcl_category", [c for c, ours in CATEGORY_MAP.items() if ours != "multi_turn"])
def test_installed_bfcl_data_converts_and_its_answers_score_correct(bfcl_category: str) -> None:
    outcomes = list(convert_category(bfcl_data_dir(), bfcl_category))
    cases = [o.case for o in outcomes if o.case is not None]
    assert cases, f"no case converted from {bfcl_category}"
    assert len(outcomes) - len(cases) <= max(2, len(outcomes) // 50)  # BFCL's own inconsistencies only
    for case in cases:
        answer = [{"name": c.name, "arguments": c.canonical_arguments()} for c in labelled(case).calls]
        if labelled(case).any_call:
            answer = [{"name": case.tools[0].name, "arguments": example_arguments(case.tools[0].parameters)}]
        assert score(case, answer).correct, case.id
