"""Call-id bookkeeping shared by the wires whose protocol links results to calls by id."""

from __future__ import annotations

from collections.abc import Sequence

from xpeval.adapters.contract import AssistantMessage, Message, ToolResultMessage


def wire_call_ids(messages: Sequence[Message]) -> dict[tuple[int, int], str]:
    """The id each (message index, call index) carries on the wire, plus each tool result's.

    A provider that returned a call without an id (Gemini's OpenAI endpoint, Snowflake) still
    needs one when the call goes back in a later request. The id is made up here, on the way
    out only, deterministically (so recorded requests match), and never put into a decoded
    ToolCall. Tool results without an id are paired with the earliest unanswered call of the
    same name. Result keys use call index -1: `(message index, -1)`.
    """
    ids: dict[tuple[int, int], str] = {}
    unanswered: list[tuple[str, str]] = []  # (name, id) in call order
    for m_index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for c_index, call in enumerate(message.tool_calls):
                call_id = call.id or f"call_{m_index}_{c_index}"
                ids[(m_index, c_index)] = call_id
                unanswered.append((call.name, call_id))
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id:
                result_id = message.tool_call_id
            else:
                match = next((i for i, (name, _) in enumerate(unanswered) if name == message.name), None)
                if match is None and unanswered:
                    match = 0
                result_id = unanswered[match][1] if match is not None else f"call_{m_index}_result"
            ids[(m_index, -1)] = result_id
            unanswered = [(n, i) for n, i in unanswered if i != result_id]
    return ids
