"""The case format: what a case file may say, and the clear errors when it says something else."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests._labelled import labelled
from xpeval.adapters.contract import ToolSpec, TurnRequest, UserMessage
from xpeval.errors import UserError
from xpeval.evals.cases import Case, load_case_file, load_cases
from xpeval.evals.cases.scripted import ScriptedToolError, UnscriptedCallError, scripted_handler

ISSUE_EXAMPLE = """
id: weather_simple_01
category: simple   # simple | multiple | parallel | parallel_multiple | irrelevance | multi_turn | approval
tools:
  - name: get_weather
    description: Current weather for a city.
    parameters: {type: object, properties: {city: {type: string}, unit: {type: string, enum: [celsius, fahrenheit]}}, required: [city]}
messages:
  - {role: user, content: "What's the weather in Paris?"}
expected:
  no_call: false
  calls:
    - name: get_weather
      arguments: {city: ["Paris", "Paris, France"], unit: ["celsius", ""]}   # acceptable values; "" = may be omitted
"""  # noqa: E501 - the example exactly as the issue gives it

TOOL = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
}
OTHER_TOOL = {
    "name": "get_time",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
}


def raw_case(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "c1",
        "category": "simple",
        "tools": [TOOL],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "expected": {"calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}]},
    }
    base.update(overrides)
    return base


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_issue_example_loads_from_yaml(tmp_path: Path) -> None:
    (loaded,) = load_case_file(write(tmp_path, "example.yaml", ISSUE_EXAMPLE), root=tmp_path)
    assert loaded.file == "example.yaml"
    assert loaded.case.category == "simple"
    assert labelled(loaded.case).calls[0].arguments["unit"] == ["celsius", ""]


def test_a_case_builds_a_contract_turn_request() -> None:
    case = Case.model_validate(raw_case())
    request = case.turn_request("qwen2.5-coder-1.5b")
    assert isinstance(request, TurnRequest)
    assert request.model == "qwen2.5-coder-1.5b"
    assert request.tools == [ToolSpec.model_validate(TOOL)]
    assert request.messages == [UserMessage(content="Weather in Paris?")]
    later = case.turn_request("m", messages=[*request.messages, UserMessage(content="and Rome?")])
    assert len(later.messages) == 2


def test_an_unknown_category_is_refused_naming_the_file_and_field(tmp_path: Path) -> None:
    write(
        tmp_path,
        "bad.yaml",
        "id: c1\ncategory: trivia\nmessages: [{role: user, content: hi}]\nexpected: {no_call: true}\n",
    )
    with pytest.raises(UserError) as caught:
        load_cases(tmp_path)
    message = str(caught.value)
    assert message.startswith("bad.yaml: case 0 (c1): category:")
    assert "'simple'" in message and "'approval'" in message


def test_a_malformed_field_is_reported_with_its_location(tmp_path: Path) -> None:
    write(
        tmp_path,
        "cases.yaml",
        """
        cases:
          - id: fine
            category: irrelevance
            messages: [{role: user, content: hi}]
            expected: {no_call: true}
          - id: broken
            category: simple
            tools: [{name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}]
            messages: [{role: user, content: hi}]
            expected: {calls: [{name: get_weather, arguments: {city: Paris}}]}
        """,
    )
    with pytest.raises(
        UserError,
        match=r"^cases\.yaml: case 1 \(broken\): expected\.calls\[0\]\.arguments\.city: \"Paris\" is a",
    ):
        load_cases(tmp_path)


def test_a_message_with_an_unknown_role_is_refused(tmp_path: Path) -> None:
    write(
        tmp_path,
        "c.yaml",
        "id: c1\ncategory: irrelevance\nmessages: [{role: robot, content: hi}]\nexpected: {no_call: true}\n",
    )
    with pytest.raises(UserError, match=r"c\.yaml: case 0 \(c1\): messages\[0\]\.role: got \"robot\""):
        load_cases(tmp_path)


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, "broken.yaml", "cases: [\n  - id: x\n")
    with pytest.raises(UserError, match=r"^broken\.yaml: invalid YAML"):
        load_cases(tmp_path)


def test_a_yaml_file_must_hold_one_case_or_a_cases_list(tmp_path: Path) -> None:
    write(tmp_path, "list.yaml", "- id: x\n")
    with pytest.raises(UserError, match=r"list\.yaml: expected one case"):
        load_cases(tmp_path)


def test_unknown_top_level_keys_are_refused_but_x_anchors_are_allowed(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a.yaml",
        """
        x-tools:
          weather: &weather
            {name: get_weather, parameters: {type: object, properties: {city: {type: string}}}}
        cases:
          - {id: a1, category: irrelevance, tools: [*weather], messages: [{role: user, content: hi}],
             expected: {no_call: true}}
          - {id: a2, category: irrelevance, tools: [*weather], messages: [{role: user, content: yo}],
             expected: {no_call: true}}
        """,
    )
    first, second = (item.case for item in load_cases(tmp_path))
    # Anchors share one object in YAML; each case must still own its schema.
    assert first.tools[0].parameters == second.tools[0].parameters
    assert first.tools[0].parameters is not second.tools[0].parameters
    write(tmp_path, "b.yaml", "tools: []\ncases: []\n")
    with pytest.raises(UserError, match=r"b\.yaml: unknown top-level key 'tools'"):
        load_cases(tmp_path)


def test_dates_and_yes_no_words_stay_strings_in_case_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        "c.yaml",
        """
        id: c1
        category: simple
        tools:
          - {name: f, parameters: {type: object, properties: {day: {type: string}, answer: {type: string}}}}
        messages: [{role: user, content: hi}]
        expected: {calls: [{name: f, arguments: {day: [2025-03-14], answer: [no, on, yes, off, ""]}}]}
        """,
    )
    (loaded,) = load_cases(tmp_path)
    arguments = labelled(loaded.case).calls[0].arguments
    assert arguments["day"] == ["2025-03-14"]
    assert arguments["answer"] == ["no", "on", "yes", "off", ""]


def test_a_case_id_used_twice_names_both_files(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        write(
            tmp_path,
            name,
            "id: same\ncategory: irrelevance\nmessages: [{role: user, content: hi}]\n"
            "expected: {no_call: true}\n",
        )
    with pytest.raises(UserError, match=r"b\.yaml: case id 'same' already used in a\.yaml"):
        load_cases(tmp_path)


def test_json_lines_files_load_and_report_bad_lines_by_number(tmp_path: Path) -> None:
    good = Case.model_validate(raw_case()).model_dump_json()
    (tmp_path / "x.jsonl").write_text(good + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"x\.jsonl: line 3: invalid JSON"):
        load_cases(tmp_path)
    (tmp_path / "x.jsonl").write_text(good + "\n", encoding="utf-8")
    assert [item.case.id for item in load_cases(tmp_path)] == ["c1"]


def test_a_missing_case_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such case file or folder"):
        load_cases(tmp_path / "nowhere")


def test_categories_filter_the_loaded_cases(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a.yaml",
        "id: a\ncategory: irrelevance\nmessages: [{role: user, content: hi}]\nexpected: {no_call: true}\n",
    )
    (tmp_path / "b.jsonl").write_text(Case.model_validate(raw_case(id="b")).model_dump_json() + "\n")
    assert [i.case.id for i in load_cases(tmp_path, categories=["simple"])] == ["b"]


# -- consistency rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"expected": {"calls": [{"name": "get_time", "arguments": {}}]}},
            "expected.calls.0.name: 'get_time' is not a tool of this case",
        ),
        (
            {
                "expected": {
                    "calls": [{"name": "get_weather", "arguments": {"city": ["Paris"], "country": ["FR"]}}]
                }
            },
            "expected.calls.0.arguments.country: not in the schema of 'get_weather'",
        ),
        (
            {"expected": {"calls": [{"name": "get_weather", "arguments": {"unit": ["celsius"]}}]}},
            "'get_weather' requires 'city', which is missing",
        ),
        (
            {"expected": {"calls": [{"name": "get_weather", "arguments": {"city": ["Paris", ""]}}]}},
            "expected.calls.0.arguments.city: required, so it cannot be optional",
        ),
        (
            {"expected": {"calls": [{"name": "get_weather", "arguments": {"city": []}}]}},
            "no acceptable value",
        ),
        (
            {"expected": {"calls": [{"name": "get_weather", "arguments": {"city": [{"name": "Paris"}]}}]}},
            "city.name: acceptable values must be a list",
        ),
        (
            {"expected": {"no_call": True, "calls": [{"name": "get_weather", "arguments": {"city": ["x"]}}]}},
            "no_call is true but calls are listed",
        ),
        ({"expected": {"no_call": False}}, "no calls listed"),
        ({"tools": [TOOL, TOOL]}, "tools.1.name: duplicate tool 'get_weather'"),
    ],
)
def test_an_inconsistent_case_is_refused_with_the_reason(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Case.model_validate(raw_case(**overrides))


TWO_CALLS = {
    "calls": [
        {"name": "get_weather", "arguments": {"city": ["Paris"]}},
        {"name": "get_weather", "arguments": {"city": ["Rome"]}},
    ]
}


@pytest.mark.parametrize(
    ("category", "overrides", "message"),
    [
        ("simple", {"expected": TWO_CALLS}, "expects exactly one call"),
        ("multiple", {"expected": TWO_CALLS}, "expects exactly one call"),
        ("parallel", {}, "expects two or more calls"),
        ("parallel_multiple", {}, "expects two or more calls"),
        ("irrelevance", {}, "expects no call"),
        ("multi_turn", {}, "needs follow_ups"),
        ("approval", {}, "approvals must name the gated tools"),
        (
            "approval",
            {"tools": [TOOL, OTHER_TOOL], "approvals": {"get_time": "deny"}},
            "no expected call names a gated tool",
        ),
    ],
)
def test_the_shape_of_a_case_must_fit_its_category(
    category: str, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        Case.model_validate(raw_case(category=category, **overrides))


def approval_case(decision: str, outputs: list[dict[str, Any]]) -> dict[str, Any]:
    return raw_case(category="approval", approvals={"get_weather": decision}, tool_outputs=outputs)


def test_an_approved_call_needs_a_scripted_output_but_a_denied_one_does_not() -> None:
    with pytest.raises(ValidationError, match=r"expected\.calls\.0: no tool_outputs entry answers this call"):
        Case.model_validate(approval_case("approve", []))
    assert Case.model_validate(approval_case("deny", [])).approvals == {"get_weather": "deny"}
    approved = Case.model_validate(approval_case("approve", [{"tool": "get_weather", "output": "sunny"}]))
    assert approved.approvals == {"get_weather": "approve"}


def test_scripted_outputs_and_approvals_must_name_tools_of_the_case() -> None:
    with pytest.raises(ValidationError, match=r"tool_outputs\.0\.tool: 'get_time' is not a tool"):
        Case.model_validate(raw_case(tool_outputs=[{"tool": "get_time", "output": 1}]))
    with pytest.raises(ValidationError, match=r"approvals\.get_time: not a tool"):
        Case.model_validate(raw_case(approvals={"get_time": "approve"}))


def test_a_multi_turn_case_lists_its_turns_in_order() -> None:
    case = Case.model_validate(
        raw_case(
            category="multi_turn",
            follow_ups=[
                {"messages": [{"role": "user", "content": "and tomorrow?"}], "expected": {"no_call": True}}
            ],
            tool_outputs=[{"tool": "get_weather", "output": {"sky": "clear"}}],
        )
    )
    assert [(t.index, labelled(t).no_call) for t in case.turns] == [(0, False), (1, True)]
    assert case.turns[1].messages == [UserMessage(content="and tomorrow?")]


# -- scripted outputs ----------------------------------------------------------------------------

OUTPUT_RULES = [
    {
        "tool": "get_weather",
        "arguments": {"city": ["Paris", "Paris, France"]},
        "output": {"sky": "clear", "c": 21},
    },
    {"tool": "get_weather", "arguments": {"city": ["Atlantis"]}, "output": "no such city", "is_error": True},
    {"tool": "get_weather", "arguments": {"unit": ["kelvin"]}, "output": "kelvin is not supported"},
]


def scripted_case() -> Case:
    return Case.model_validate(raw_case(tool_outputs=OUTPUT_RULES))


def test_the_first_scripted_output_whose_pattern_matches_answers() -> None:
    case = scripted_case()
    first = case.scripted_output("get_weather", {"city": "paris, france"})
    assert first is not None and first.content == '{"sky":"clear","c":21}'
    by_unit = case.scripted_output("get_weather", {"city": "Lyon", "unit": "Kelvin"})
    assert by_unit is not None and by_unit.content == "kelvin is not supported"
    assert case.scripted_output("get_weather", {"city": "Lyon"}) is None
    assert case.scripted_output("get_time", {"city": "Paris"}) is None


def test_a_scripted_handler_serves_outputs_and_raises_scripted_errors() -> None:
    handler = scripted_handler(scripted_case(), "get_weather")
    assert handler({"city": "Paris"}) == '{"sky":"clear","c":21}'
    with pytest.raises(ScriptedToolError, match="no such city"):
        handler({"city": "Atlantis"})
    with pytest.raises(UnscriptedCallError, match="no result is available"):
        handler({"city": "Lyon"})
    with pytest.raises(UnscriptedCallError, match="must be an object"):
        handler(["Paris"])
