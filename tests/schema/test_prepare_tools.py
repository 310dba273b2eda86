"""Preparing the tools of one request: names per provider, the way back, per-request limits."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xpeval.adapters.contract import ToolCall, ToolSpec
from xpeval.adapters.schema import DIALECTS, Dialect, map_names, prepare_tools
from xpeval.adapters.schema.names import NAME_RULES

NAMES = st.text(alphabet=st.sampled_from("ab1._-:/ é€" + "x" * 3), min_size=0, max_size=90)


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=60, deadline=None)
@given(names=st.lists(NAMES, max_size=8))
def test_mapped_names_fit_the_provider_are_distinct_and_stable(dialect: Dialect, names: list[str]) -> None:
    mapping = map_names(dialect, names)
    rule = NAME_RULES[dialect]
    sent = list(mapping.wire.values())
    assert all(rule.pattern.fullmatch(name) for name in sent)
    assert len(set(sent)) == len(sent)
    assert set(mapping.wire) == set(names)
    assert map_names(dialect, list(reversed(names))).wire == mapping.wire


def test_a_name_that_already_fits_is_sent_unchanged() -> None:
    assert map_names("openai", ["get_weather", "x-1"]).wire == {"get_weather": "get_weather", "x-1": "x-1"}


def test_dots_are_mapped_for_openai_and_kept_for_gemini() -> None:
    assert map_names("openai", ["math.add"]).wire["math.add"] == "math_add"
    assert map_names("gemini-json-schema", ["math.add"]).wire["math.add"] == "math.add"


def test_moonshot_and_gemini_names_do_not_start_with_a_digit() -> None:
    for dialect in ("moonshot", "gemini-openapi"):
        assert not map_names(dialect, ["3d_render"]).wire["3d_render"][0].isdigit()


def test_two_names_that_map_alike_stay_distinct() -> None:
    wire = map_names("openai", ["a.b", "a_b", "a/b"]).wire
    assert wire["a_b"] == "a_b" and len(set(wire.values())) == 3


def test_a_renamed_tool_is_reported_and_its_calls_come_back_under_the_original_name() -> None:
    tools = prepare_tools(
        "openai", [ToolSpec(name="fs.read", parameters={"type": "object", "properties": {}})]
    )
    sent_name = tools.wire_name("fs.read")
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", sent_name)
    assert tools.tools[0].losses[0].action == "renamed"
    call = tools.restore(ToolCall(id="1", name=sent_name, arguments={"x": 1}))
    assert call.name == "fs.read" and call.arguments == {"x": 1}


def test_restore_turns_strict_nulls_back_into_omitted_fields_only_where_the_pass_added_them() -> None:
    spec = ToolSpec(
        name="search",
        parameters={
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "limit": {"type": "integer"},
                "cursor": {"type": ["string", "null"]},
            },
            "required": ["q"],
        },
    )
    tools = prepare_tools("openai-strict", [spec])
    assert tools.strict is True
    call = tools.restore(ToolCall(id="1", name="search", arguments={"q": "x", "limit": None, "cursor": None}))
    assert call.arguments == {"q": "x", "cursor": None}


def test_a_duplicate_name_is_refused() -> None:
    tools = prepare_tools("anthropic", [ToolSpec(name="t"), ToolSpec(name="t")])
    assert [t.refusal for t in tools.tools] == [None, "duplicate tool name 't' in one request"]


def test_tools_past_the_providers_cap_are_refused() -> None:
    tools = prepare_tools("openai", [ToolSpec(name=f"t{i}") for i in range(130)])
    refused = [t for t in tools.tools if t.refusal]
    assert len(refused) == 2 and "at most 128 tools" in (refused[0].refusal or "")


def test_anthropic_strict_refuses_tools_past_the_optional_property_ceiling() -> None:
    def tool(i: int) -> ToolSpec:
        props = {f"p{j}": {"type": "string"} for j in range(10)}
        return ToolSpec(
            name=f"t{i}", parameters={"type": "object", "properties": props, "additionalProperties": False}
        )

    tools = prepare_tools("anthropic-strict", [tool(i) for i in range(3)])
    assert [t.refusal is None for t in tools.tools] == [True, True, False]
    assert "optional properties" in (tools.tools[2].refusal or "")
