"""A conversation's call ids mapped for another wire: a bijection within the conversation that
keeps every call paired with its result, whatever ids the source produced (property test)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from xpeval.adapters.contract import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage
from xpeval.adapters.wires.handoff_ids import FORMATS, map_call_ids

NAMES = ("get_weather", "get_time", "book")
SOURCE_IDS = st.one_of(
    st.none(),
    st.sampled_from(["call_0", "call_1", "toolu_01A", "abc123XYZ", "a1b2c3d4", "x"]),  # reused across turns
    st.text(min_size=1, max_size=80),  # anything a server sent: spaces, unicode, over 64 characters
)


@dataclass
class Conversation:
    messages: list[Message]
    answers: dict[int, tuple[int, int]]
    """Result message index -> the (message index, call index) it answers."""


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    messages: list[Message] = [UserMessage(content="go")]
    answers: dict[int, tuple[int, int]] = {}
    for _ in range(draw(st.integers(1, 4))):
        calls = [
            ToolCall(id=draw(SOURCE_IDS), name=draw(st.sampled_from(NAMES)), arguments={"n": n})
            for n in range(draw(st.integers(1, 3)))
        ]
        at = len(messages)
        messages.append(AssistantMessage(tool_calls=calls))
        for index, call in enumerate(calls):
            answers[len(messages)] = (at, index)
            messages.append(ToolResultMessage(tool_call_id=call.id, name=call.name, content=f"r{index}"))
        if draw(st.booleans()):
            messages.append(UserMessage(content="more"))
    return Conversation(messages, answers)


def _call_id(messages: list[Message], where: tuple[int, int]) -> str | None:
    message = messages[where[0]]
    assert isinstance(message, AssistantMessage)
    return message.tool_calls[where[1]].id


@settings(max_examples=200, deadline=None)
@given(conversations(), st.sampled_from(sorted(FORMATS)))
def test_call_ids_map_bijectively_and_every_call_keeps_its_result(
    conversation: Conversation, target: str
) -> None:
    mapped, ids = map_call_ids(conversation.messages, target)
    calls = [
        (m, c)
        for m, msg in enumerate(mapped)
        if isinstance(msg, AssistantMessage)
        for c in range(len(msg.tool_calls))
    ]
    new_ids = [_call_id(mapped, where) for where in calls]
    assert len(set(new_ids)) == len(new_ids), "two calls of one conversation share an id"
    for where, new_id in zip(calls, new_ids, strict=True):
        assert new_id is not None and FORMATS[target].fits(new_id), (target, new_id)
        assert ids.source(new_id) == _call_id(conversation.messages, where)  # reversible
    for result_at, call_at in conversation.answers.items():
        result = mapped[result_at]
        assert isinstance(result, ToolResultMessage)
        assert result.tool_call_id == _call_id(mapped, call_at), "a result lost its call"
    assert [m.role for m in mapped] == [m.role for m in conversation.messages]
    again, _ = map_call_ids(mapped, target)
    assert again == mapped, "ids already in the target's format, one per call, are kept"
