"""The shipped chat template: tools listed, the call form (one fenced block holding a JSON list of
calls) asked for and used for earlier calls, tool results returned. Rendered with jinja2 under
llama-server's whitespace settings (trim_blocks and lstrip_blocks, as in llama.cpp's own engine)."""

from __future__ import annotations

import json
import re
from typing import Any

import jinja2
import pytest

from xpeval.evals.local_model import chat_template_path

FENCED_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": 'Current weather for a city <with markup & quotes">',
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Time now",
        "parameters": {"type": "object", "properties": {}},
    },
}


def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **extra: Any) -> str:
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(chat_template_path().read_text(encoding="utf-8"))
    return template.render(messages=messages, tools=tools, add_generation_prompt=True, **extra)


def turns(prompt: str) -> list[tuple[str, str]]:
    """(role, body) of each ChatML turn; the open generation turn last with an empty body."""
    return re.findall(r"<\|im_start\|>(\w+)\n(.*?)(?:<\|im_end\|>\n|$)", prompt, re.DOTALL)


def test_every_tool_is_listed_with_its_json_description() -> None:
    prompt = render([{"role": "user", "content": "hi"}], [WEATHER, TIME])
    system = turns(prompt)[0][1]

    section = system.split("# Tools", 1)[1].split("To call tools", 1)[0]
    listed = [json.loads(line) for line in section.splitlines() if line.startswith("{")]
    assert listed == [WEATHER["function"], TIME["function"]]


def test_the_model_is_asked_for_one_fenced_list_of_calls() -> None:
    system = turns(render([{"role": "user", "content": "hi"}], [WEATHER]))[0][1]

    example = FENCED_BLOCK.search(system)
    assert example is not None
    assert example.group(1).startswith('[{"name": ') and '"arguments": {' in example.group(1)
    assert example.group(1).endswith("}]")
    assert "plain text" in system  # the way out when no tool fits


def test_without_tools_there_is_no_tool_section() -> None:
    prompt = render([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])

    assert turns(prompt) == [("system", "Be brief."), ("user", "hi"), ("assistant", "")]


@pytest.mark.parametrize(
    "arguments", ['{"city": "Paris"}', {"city": "Paris"}], ids=["arguments-as-text", "arguments-as-object"]
)
def test_an_earlier_assistant_call_is_rendered_as_the_same_fenced_list(arguments: Any) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    prompt = render(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
        [WEATHER],
    )
    assistant = turns(prompt)[2]

    assert assistant[0] == "assistant"
    assert [json.loads(block) for block in FENCED_BLOCK.findall(assistant[1])] == [
        [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    ]
    assert assistant[1].startswith("```json")


def test_text_and_parallel_calls_keep_their_order() -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}
        for i, city in enumerate(["Paris", "Rome"])
    ]
    prompt = render(
        [
            {"role": "user", "content": "Both?"},
            {"role": "assistant", "content": "Checking both.", "tool_calls": calls},
        ],
        [WEATHER],
    )
    body = turns(prompt)[2][1]

    assert body.startswith("Checking both.\n```json")
    (block,) = FENCED_BLOCK.findall(body)
    assert [call["arguments"]["city"] for call in json.loads(block)] == ["Paris", "Rome"]


def test_tool_results_go_back_as_one_user_turn_of_tool_responses() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    prompt = render(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "tool_calls": [call, call]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "rainy"}]},
            {"role": "user", "content": "Thanks"},
        ],
        [WEATHER],
    )
    rendered = turns(prompt)

    assert [role for role, _ in rendered] == ["system", "user", "assistant", "user", "user", "assistant"]
    assert (
        rendered[3][1] == "<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrainy\n</tool_response>"
    )


def test_content_given_as_text_parts_is_rendered_as_text() -> None:
    prompt = render(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "+two"}],
            }
        ]
    )

    assert ("user", "part one+two") in turns(prompt)


def test_a_later_system_message_stays_a_system_turn() -> None:
    prompt = render([{"role": "user", "content": "a"}, {"role": "system", "content": "Now be terse."}])

    assert turns(prompt)[2] == ("system", "Now be terse.")


def _call(call_id: str, city: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": city}},
    }


def _assistant_body(calls: list[dict[str, Any]], content: str | None = None) -> str:
    prompt = render(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": content, "tool_calls": calls},
        ],
        [WEATHER],
    )
    return turns(prompt)[2][1]


def test_a_single_call_is_a_fenced_list_of_one() -> None:
    assert _assistant_body([_call("c1", "Paris")]) == (
        '```json\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n```'
    )


def test_several_earlier_calls_render_as_one_fenced_list() -> None:
    body = _assistant_body([_call(f"c{i}", city) for i, city in enumerate(["Paris", "Rome", "Oslo"])])

    assert body.count("```json\n") == 1
    assert (
        body
        == "```json\n["
        + ", ".join(
            f'{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}'
            for city in ["Paris", "Rome", "Oslo"]
        )
        + "]\n```"
    )


def test_a_second_call_extends_the_list_after_a_comma() -> None:
    # llama-server compares the rendering of one call with that of two: a second call that
    # follows the first inside the same list, after a comma, makes it parse one fenced list as
    # one or more calls (its JSON-list form), so several calls in one block are parallel calls.
    one = _assistant_body([_call("c1", "Paris")])
    two = _assistant_body([_call("c1", "Paris"), _call("c2", "Rome")])
    second = '{"name": "get_weather", "arguments": {"city": "Rome"}}'

    assert one.endswith("]\n```")
    assert two == one[: -len("]\n```")] + ", " + second + "]\n```"


def test_the_instructions_show_several_calls_in_one_list() -> None:
    system = turns(render([{"role": "user", "content": "hi"}], [WEATHER]))[0][1]
    instructions = system.split("To call tools", 1)[1]

    examples = [
        json.loads(re.sub(r"\{<[^>]*>\}", "{}", block)) for block in FENCED_BLOCK.findall(instructions)
    ]
    # The one-call form, then two calls in the same one block: never one block per call.
    assert [len(example) for example in examples] == [1, 2]
    assert all(set(call) == {"name", "arguments"} for example in examples for call in example)
