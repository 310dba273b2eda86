"""A recorded request body read back as far as a handoff needs it (issue 34, "Handoff").

A conversation recorded through one adapter is a series of requests and replies. Its assistant
turns come from the replies (decoded by their wire, so their reasoning state is what the codec
keeps); what the caller added between two replies, the system prompt, user messages and tool
results, comes from each request after its last assistant entry: `request_tail`. The tools a
request offered come back as `ToolSpec`s: `request_tools`. Both read the REST body the SDK sent
(the shape a cassette records), for every wire xpeval ships, the bundled plugin wires included;
a body this cannot read is a `ValueError` naming where, never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from xpeval.adapters.contract import (
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from xpeval.adapters.contract import WireName as _WireName
from xpeval.adapters.wires.loop_rules.anthropic import ANTHROPIC_MESSAGES
from xpeval.adapters.wires.loop_rules.google import GOOGLE_GENAI
from xpeval.adapters.wires.loop_rules.openai_chat import OPENAI_CHAT
from xpeval.adapters.wires.loop_rules.openai_responses import OPENAI_RESPONSES

MISTRAL_CHAT = "mistral-chat"
COHERE_CHAT = "cohere-chat"
BEDROCK_CONVERSE = "bedrock-converse"
_CHAT_LIKE = (OPENAI_CHAT, MISTRAL_CHAT, COHERE_CHAT)


def _text(content: Any) -> str:
    """A message's text: a string, or the text of its text parts/blocks (other parts skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, Mapping):
            value = part.get("text")
            if isinstance(value, str):
                pieces.append(value)
            elif "json" in part:
                pieces.append(json.dumps(part["json"], ensure_ascii=False))
    return "".join(pieces)


def _items(body: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"`{key}` is not a list")
    return [item for item in value if isinstance(item, Mapping)]


def _after_last(entries: list[Mapping[str, Any]], is_assistant: Callable[[Mapping[str, Any]], bool]) -> int:
    return max((i + 1 for i, entry in enumerate(entries) if is_assistant(entry)), default=0)


def _chat_tail(body: Mapping[str, Any]) -> list[Message]:
    messages = _items(body, "messages")
    out: list[Message] = []
    for message in messages[_after_last(messages, lambda m: m.get("role") == "assistant") :]:
        role = message.get("role")
        if role in ("system", "developer"):
            out.append(SystemMessage(content=_text(message.get("content"))))
        elif role == "user":
            out.append(UserMessage(content=_text(message.get("content"))))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            out.append(
                ToolResultMessage(
                    tool_call_id=call_id if isinstance(call_id, str) else None,
                    name=str(message.get("name") or ""),
                    content=_text(message.get("content")),
                )
            )
    return out


def _anthropic_tail(body: Mapping[str, Any]) -> list[Message]:
    messages = _items(body, "messages")
    start = _after_last(messages, lambda m: m.get("role") == "assistant")
    out: list[Message] = []
    if start == 0 and body.get("system"):
        out.append(SystemMessage(content=_text(body.get("system"))))
    for message in messages[start:]:
        content = message.get("content")
        if isinstance(content, str):
            out.append(UserMessage(content=content))
            continue
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                out.append(
                    ToolResultMessage(
                        tool_call_id=call_id if isinstance(call_id, str) else None,
                        name="",
                        content=_text(block.get("content")),
                        is_error=block.get("is_error") is True,
                    )
                )
            elif block.get("type") == "text":
                out.append(UserMessage(content=_text(block)))
    return out


def _responses_tail(body: Mapping[str, Any]) -> list[Message]:
    raw = body.get("input")
    if isinstance(raw, str):
        items: list[Mapping[str, Any]] = [{"role": "user", "content": raw}]
    else:
        items = _items(body, "input")

    def produced(item: Mapping[str, Any]) -> bool:
        return item.get("role") == "assistant" or item.get("type") in ("function_call", "reasoning")

    start = _after_last(items, produced)
    out: list[Message] = []
    if start == 0 and isinstance(body.get("instructions"), str):
        out.append(SystemMessage(content=body["instructions"]))
    for item in items[start:]:
        if item.get("type") == "function_call_output":
            call_id = item.get("call_id")
            out.append(
                ToolResultMessage(
                    tool_call_id=call_id if isinstance(call_id, str) else None,
                    name="",
                    content=_text(item.get("output")),
                )
            )
        elif item.get("role") in ("system", "developer"):
            out.append(SystemMessage(content=_text(item.get("content"))))
        elif item.get("role") == "user":
            out.append(UserMessage(content=_text(item.get("content"))))
    return out


def _google_tail(body: Mapping[str, Any]) -> list[Message]:
    contents = _items(body, "contents")
    start = _after_last(contents, lambda c: c.get("role") == "model")
    out: list[Message] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if start == 0 and system:
        out.append(
            SystemMessage(content=_text(system.get("parts") if isinstance(system, Mapping) else system))
        )
    for content in contents[start:]:
        for part in _items(content, "parts"):
            response = part.get("functionResponse") or part.get("function_response")
            if isinstance(response, Mapping):
                call_id = response.get("id")
                value = response.get("response")
                out.append(
                    ToolResultMessage(
                        tool_call_id=call_id if isinstance(call_id, str) else None,
                        name=str(response.get("name") or ""),
                        content=value if isinstance(value, str) else json.dumps(value, ensure_ascii=False),
                    )
                )
            elif isinstance(part.get("text"), str):
                out.append(UserMessage(content=part["text"]))
    return out


def _bedrock_tail(body: Mapping[str, Any]) -> list[Message]:
    messages = _items(body, "messages")
    start = _after_last(messages, lambda m: m.get("role") == "assistant")
    out: list[Message] = []
    if start == 0 and body.get("system"):
        out.append(SystemMessage(content=_text(body.get("system"))))
    for message in messages[start:]:
        for block in _items(message, "content"):
            result = block.get("toolResult")
            if isinstance(result, Mapping):
                call_id = result.get("toolUseId")
                out.append(
                    ToolResultMessage(
                        tool_call_id=call_id if isinstance(call_id, str) else None,
                        name="",
                        content=_text(result.get("content")),
                        is_error=result.get("status") == "error",
                    )
                )
            elif isinstance(block.get("text"), str):
                out.append(UserMessage(content=block["text"]))
    return out


_TAILS: dict[_WireName, Callable[[Mapping[str, Any]], list[Message]]] = {
    **dict.fromkeys(_CHAT_LIKE, _chat_tail),
    ANTHROPIC_MESSAGES: _anthropic_tail,
    OPENAI_RESPONSES: _responses_tail,
    GOOGLE_GENAI: _google_tail,
    BEDROCK_CONVERSE: _bedrock_tail,
}
READABLE_WIRES: tuple[_WireName, ...] = tuple(_TAILS)
"""The wires whose recorded requests this module reads."""


def request_tail(wire: _WireName, body: Any) -> list[Message]:
    """What the caller added to a recorded request after its last assistant entry (all of it in a
    first request): system prompt, user messages, tool results. A tool result's `name` is empty
    where the wire does not say it (the call it answers does)."""
    reader = _TAILS.get(wire)
    if reader is None:
        raise ValueError(f"cannot read a recorded {wire} request")
    if not isinstance(body, Mapping):
        raise ValueError(f"the recorded {wire} request is not a JSON object")
    return reader(body)


def _spec(name: Any, description: Any, parameters: Any) -> ToolSpec | None:
    if not isinstance(name, str) or not name:
        return None
    schema = parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}
    return ToolSpec(
        name=name, description=description if isinstance(description, str) else "", parameters=schema
    )


def _lowered_types(schema: Any) -> Any:
    """Gemini's OpenAPI `parameters` spell types in capitals (`OBJECT`): JSON Schema's are lower."""
    if isinstance(schema, list):
        return [_lowered_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: value.lower() if key == "type" and isinstance(value, str) else _lowered_types(value)
        for key, value in schema.items()
    }


def _tool_specs(wire: _WireName, body: Mapping[str, Any]) -> list[ToolSpec | None]:
    if wire in _CHAT_LIKE:
        return [
            _spec(f.get("name"), f.get("description"), f.get("parameters"))
            for tool in _items(body, "tools")
            if isinstance(f := tool.get("function"), Mapping)
        ]
    if wire == OPENAI_RESPONSES:
        return [
            _spec(t.get("name"), t.get("description"), t.get("parameters"))
            for t in _items(body, "tools")
            if t.get("type") == "function"
        ]
    if wire == ANTHROPIC_MESSAGES:
        return [
            _spec(t.get("name"), t.get("description"), t.get("input_schema")) for t in _items(body, "tools")
        ]
    if wire == GOOGLE_GENAI:
        declarations = [
            d
            for tool in _items(body, "tools")
            for d in _items(tool, "functionDeclarations") + _items(tool, "function_declarations")
        ]
        return [
            _spec(
                d.get("name"),
                d.get("description"),
                d.get("parametersJsonSchema") or _lowered_types(d.get("parameters")),
            )
            for d in declarations
        ]
    if wire == BEDROCK_CONVERSE:
        config = body.get("toolConfig")
        specs = [t.get("toolSpec") for t in _items(config, "tools")] if isinstance(config, Mapping) else []
        return [
            _spec(s.get("name"), s.get("description"), (s.get("inputSchema") or {}).get("json"))
            for s in specs
            if isinstance(s, Mapping)
        ]
    raise ValueError(f"cannot read a recorded {wire} request")


def request_tools(wire: _WireName, body: Any) -> list[ToolSpec]:
    """The function tools a recorded request offered, schemas as sent (Gemini's OpenAPI types in
    lower case); other tools (built-in, server-side) are not read."""
    if not isinstance(body, Mapping):
        raise ValueError(f"the recorded {wire} request is not a JSON object")
    seen: dict[str, ToolSpec] = {}
    for spec in _tool_specs(wire, body):
        if spec is not None:
            seen.setdefault(spec.name, spec)
    return list(seen.values())


__all__ = ["READABLE_WIRES", "request_tail", "request_tools"]
