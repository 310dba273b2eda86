"""The harness's parser of calls a local model wrote as text, and where it applies: every model
served with the project's template, never the GGUF-template vendor."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests._cli import Cli
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ProviderError, ToolCall, ToolSpec, TurnRequest, TurnResult, UserMessage
from xpeval.evals.conformance._fixtures import wire_of
from xpeval.evals.emulator import Reply, ScriptedTransport
from xpeval.evals.local_model import create_local_adapter
from xpeval.evals.local_model.models import MODELS, QWEN_CODER_1_5B_GGUF_TEMPLATE
from xpeval.evals.local_model.text_calls import read_text_calls

PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
ROME = '{"name": "get_weather", "arguments": {"city": "Rome"}}'


def calls(result: TurnResult) -> list[tuple[str, dict[str, object]]]:
    return [(call.name, call.arguments) for call in result.tool_calls]


@pytest.mark.parametrize(
    "text",
    [
        PARIS,  # fence-less: what llama-server leaves as text
        f"```json\n{PARIS}\n```",  # a fenced object instead of the template's list
        f"```\n{PARIS}\n```",
        f"```json\n[{PARIS}]\n```",
        f"  {PARIS}\n",
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',  # arguments as text
    ],
    ids=["bare", "fenced-object", "fence-without-language", "fenced-list", "padded", "arguments-as-text"],
)
def test_a_call_written_as_text_becomes_the_call(text: str) -> None:
    result = read_text_calls(TurnResult(text=text, finish_reason="stop"))

    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert (result.text, result.finish_reason) == (None, "tool_calls")
    assert result.tool_calls[0].id is None  # never an invented id


@pytest.mark.parametrize(
    "text",
    [
        f"{PARIS}\n{ROME}",  # one object per line
        f"[{PARIS}, {ROME}]",
        f"```json\n{PARIS}\n{ROME}\n```",
        f"```json\n{PARIS}\n```\n```json\n{ROME}\n```",
        f"{PARIS}, {ROME}",
    ],
    ids=["lines", "list", "lines-in-one-fence", "two-fences", "commas"],
)
def test_several_calls_keep_their_order(text: str) -> None:
    result = read_text_calls(TurnResult(text=text))

    assert calls(result) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]


def test_prose_around_fenced_calls_stays_the_text() -> None:
    result = read_text_calls(TurnResult(text=f"Checking.\n```json\n[{PARIS}]\n```\nDone."))

    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert result.text == "Checking.\n\nDone."


@pytest.mark.parametrize(
    "text",
    [
        "It is sunny in Paris.",
        f"You could call {PARIS} for that.",  # a bare call inside prose is prose
        '{"city": "Paris"}',  # JSON, but not a call
        '{"name": "get_weather", "arguments": [1]}',
        f"[{PARIS}, 3]",  # a list that is not only calls
        f"```json\n{PARIS}",  # an unclosed fence (cut at max tokens)
        "```python\nprint(1)\n```",
        '{"name": "get_weather", "arguments": "not json"}',
    ],
)
def test_anything_else_is_left_as_it_is(text: str) -> None:
    original = TurnResult(text=text, finish_reason="stop")

    assert read_text_calls(original) == original


def test_a_reply_with_calls_or_an_error_is_untouched() -> None:
    parsed = TurnResult(text=PARIS, tool_calls=[ToolCall(name="x")])
    failed = TurnResult(text=PARIS, error=ProviderError(kind="stream", message="cut"))

    assert read_text_calls(parsed) == parsed
    assert read_text_calls(failed) == failed


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.alias)
def test_every_model_served_with_the_project_template_reads_text_calls(model: object) -> None:
    assert create_local_adapter("openai-compatible", model=model).reply_hook is read_text_calls  # type: ignore[arg-type]


def test_the_gguf_template_vendor_is_read_as_llama_server_reads_it() -> None:
    assert create_local_adapter("openai-compatible", model=QWEN_CODER_1_5B_GGUF_TEMPLATE).reply_hook is None


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_local_adapter_reads_the_text_before_restoring_tool_names(stream: bool) -> None:
    # A dotted name goes out as the dialect's name; the model writes that name in its text,
    # and the call comes back under the case's own name, plain and streamed alike.
    tool = ToolSpec(name="lawsuit.lookup", description="d", parameters={"type": "object", "properties": {}})
    request = TurnRequest(
        model="qwen2.5-coder-1.5b-instruct",
        messages=[UserMessage(content="Cases of 2019?")],
        tools=[tool],
        tool_choice="auto",
        stream=stream,
    )
    sent_name = (
        create_local_adapter("openai-compatible").prepare(request).kwargs["tools"][0]["function"]["name"]
    )
    text = f'```json\n{{"name": "{sent_name}", "arguments": {{"year": 2019}}}}\n```'
    script = ScriptedTransport(wire_of("openai-compatible"), [Reply(result=TurnResult(text=text))])
    adapter = create_local_adapter(
        "openai-compatible", AdapterSettings(transport=script.transport(), timeout=10.0)
    )

    result = asyncio.run(adapter.turn(request))

    assert sent_name != tool.name
    assert calls(result) == [("lawsuit.lookup", {"year": 2019})]
    assert (result.text, result.finish_reason) == (None, "tool_calls")


RECORDED = Path(__file__).parents[2] / "cassettes" / "openai-responses" / "qwen2.5-coder-1.5b-instruct"


@pytest.mark.parametrize(
    "read_as_text_calls", [False, True], ids=["recorded-before-the-parser", "recorded-with-it"]
)
def test_replay_reads_a_reply_as_its_recording_was_read(
    cli: Cli, tmp_path: Path, read_as_text_calls: bool
) -> None:
    # A committed recording of 2026-12-01 whose reply is a call written as plain JSON text: its
    # later turns (none here) followed the text unparsed, so it replays as no call; the same
    # recording marked as read by the parser replays as the call.
    cassette = RECORDED / "calc_irrelevance_01.yaml"
    target = tmp_path / "cassettes" / "openai-responses" / "qwen2.5-coder-1.5b-instruct" / cassette.name
    target.parent.mkdir(parents=True)
    text = cassette.read_text(encoding="utf-8")
    assert "text_calls" not in text
    if read_as_text_calls:
        text = text.replace("    source: local-model\n", "    source: local-model\n    text_calls: true\n")
    target.write_text(text, encoding="utf-8")
    results = tmp_path / "results.jsonl"

    ran = cli(
        "run",
        "--no-progress",
        "--no-baseline",
        "--adapters",
        "openai-responses",
        "--cases",
        cassette.stem,
        "--cassettes",
        str(tmp_path / "cassettes"),
        "--results",
        str(results),
        "--reports",
        str(tmp_path / "r"),
    )

    assert ran.returncode == 0, ran.stdout[-2000:]
    (row,) = [r for r in map(json.loads, results.read_text().splitlines()) if r.get("type") == "result"]
    assert [call["name"] for call in row["calls"]] == (["get_world_cup_winner"] if read_as_text_calls else [])
