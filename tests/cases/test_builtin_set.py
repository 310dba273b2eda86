"""The built-in case set: big enough, every category covered, and every case internally sound."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from tests._labelled import labelled
from xpeval.evals.cases import BUILTIN_DIR, CATEGORIES, Case, load_case_file, load_cases
from xpeval.evals.cases.schema_root import root_properties

BUILTIN = [item.case for item in load_cases()]
BUILTIN_FILES = sorted(p for p in BUILTIN_DIR.iterdir() if p.suffix in (".yaml", ".yml", ".jsonl"))
PROVIDER_SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_the_set_has_at_least_80_cases_and_8_in_every_labelled_category() -> None:
    # Unlabelled cases are real traffic a team imports (`xpeval cases requests`), not built in;
    # task cases are a set of their own (tasks/retail/cases: a simulated user per case, docs/cases.md);
    # relevance cases are BFCL's live_relevance (`xpeval cases bfcl`: any call passes).
    counts = Counter(case.category for case in BUILTIN)
    assert len(BUILTIN) >= 80
    labelled = [c for c in CATEGORIES if c not in ("unlabelled", "task", "relevance")]
    assert {category: counts[category] for category in labelled if counts[category] < 8} == {}
    assert counts["unlabelled"] == 0


@pytest.mark.parametrize("path", BUILTIN_FILES, ids=lambda p: p.name)
def test_every_builtin_file_loads(path: Path) -> None:
    assert load_case_file(path, root=BUILTIN_DIR)


def test_the_cases_are_written_for_this_project() -> None:
    assert {case.origin for case in BUILTIN} == {"xpeval"}


def test_every_expected_call_names_a_tool_of_its_case_and_only_schema_arguments() -> None:
    problems = []
    for case in BUILTIN:
        for turn in case.turns:
            for call in labelled(turn).calls:
                tool = case.tool(call.name)
                if tool is None:
                    problems.append(f"{case.id}: {call.name} is not offered")
                    continue
                unknown = set(call.arguments) - set(root_properties(tool.parameters))
                if unknown:
                    problems.append(f"{case.id}: {call.name} expects {sorted(unknown)} outside its schema")
    assert problems == []


def test_every_tool_schema_is_valid_json_schema() -> None:
    for case in BUILTIN:
        for tool in case.tools:
            Draft202012Validator.check_schema(tool.parameters)


def test_the_first_acceptable_answer_of_every_call_is_valid_for_its_tool() -> None:
    checker = FormatChecker()
    problems = []
    for case in BUILTIN:
        for turn in case.turns:
            for call in labelled(turn).calls:
                tool = case.tool(call.name)
                assert tool is not None
                validator = Draft202012Validator(tool.parameters, format_checker=checker)
                problems += [
                    f"{case.id}/{call.name}: {error.message}"
                    for error in validator.iter_errors(call.canonical_arguments())
                ]
    assert problems == []


def test_tool_names_are_accepted_by_every_provider() -> None:
    names = {tool.name for case in BUILTIN for tool in case.tools}
    assert sorted(n for n in names if not PROVIDER_SAFE_NAME.match(n)) == []


def test_each_category_has_its_shape() -> None:
    problems = []
    for case in BUILTIN:
        names = [call.name for call in labelled(case).calls]
        shape_ok = {
            "simple": len(case.tools) == 1 and len(names) == 1,
            "multiple": len(case.tools) >= 2 and len(names) == 1,
            "parallel": len(names) >= 2 and len(set(names)) == 1,
            "parallel_multiple": len(set(names)) >= 2,
            "irrelevance": not names and bool(case.tools),
            "multi_turn": len(case.turns) >= 2 and bool(case.tool_outputs),
            "approval": any(call.name in case.approvals for t in case.turns for call in labelled(t).calls),
        }[case.category]
        if not shape_ok:
            problems.append(case.id)
    assert problems == []


def test_approval_cases_cover_both_decisions() -> None:
    decisions = Counter(d for case in BUILTIN if case.category == "approval" for d in case.approvals.values())
    assert decisions["approve"] >= 3 and decisions["deny"] >= 3


def _nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _nodes(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _nodes(item)


def _features(case: Case) -> set[str]:
    found = set()
    for tool in case.tools:
        for node in _nodes(tool.parameters):
            types = node.get("type")
            type_list = types if isinstance(types, list) else [types]
            if "enum" in node:
                found.add("enum")
            if "null" in type_list or any(
                isinstance(o, dict) and o.get("type") == "null" for o in node.get("anyOf", [])
            ):
                found.add("nullable")
            if "$ref" in node:
                found.add("$ref")
            if "$defs" in node:
                found.add("$defs")
            if "format" in node:
                found.add("format")
            if {
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "minItems",
                "maxItems",
                "minLength",
                "maxLength",
            } & set(node):
                found.add("bounds")
            if "pattern" in node:
                found.add("pattern")
            if "object" in type_list and node is not tool.parameters and "properties" in node:
                found.add("nested-object")
            items = node.get("items")
            if (
                "array" in type_list
                and isinstance(items, dict)
                and (items.get("type") == "object" or "$ref" in items)
            ):
                found.add("array-of-objects")
    return found


def test_tool_schemas_use_what_real_tools_use() -> None:
    usage = Counter(feature for case in BUILTIN for feature in _features(case))
    wanted = [
        "enum",
        "nullable",
        "$ref",
        "$defs",
        "format",
        "bounds",
        "pattern",
        "nested-object",
        "array-of-objects",
    ]
    assert {feature: usage[feature] for feature in wanted if usage[feature] < 5} == {}
