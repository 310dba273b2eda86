"""The skeleton every shipped codec fills in (`adapters/wires/_base.py`): what it does the same
way for every wire."""

from __future__ import annotations

from xpeval.adapters.wires import get_wire
from xpeval.plugin import PendingCall


def test_a_pending_call_spells_its_pieces_and_says_why_they_are_not_an_object() -> None:
    whole = PendingCall(id="c1", name="get_weather", arguments=['{"city": ', '"Paris"}'])
    assert whole.tool_call().model_dump(
        include={"id", "name", "arguments", "raw_arguments", "parse_error"}
    ) == {
        "id": "c1",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
        "raw_arguments": '{"city": "Paris"}',
        "parse_error": None,
    }
    cut = PendingCall(name="get_weather", arguments=['{"city": ']).tool_call()
    assert cut.arguments == {} and cut.raw_arguments == '{"city": ' and cut.parse_error
    assert cut.id is None


def test_a_plain_reply_that_is_not_the_wires_is_a_decode_error_on_every_bundled_wire() -> None:
    for name in ("mistral-chat", "cohere-chat", "bedrock-converse"):
        result = get_wire(name).decode({"unexpected": True})
        assert result.error is not None and result.error.kind == "decode", name
        assert result.finish_reason == "error" and result.tool_calls == [], name
