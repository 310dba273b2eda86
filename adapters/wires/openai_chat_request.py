"""An OpenAI Chat Completions request body read back into a canonical `TurnRequest`: real
traffic (logged requests, the vendor verifier's samples) becomes cases (`xpeval cases requests`).

The inverse of `OpenAIChatWire.encode` for what a case carries: messages (system, user,
assistant with tool calls, tool results), function tools with their schemas verbatim,
`tool_choice`. Sampling and transport keys are left to the run that plays the case and reported
(`IGNORED_KEYS`); anything else, or any message or tool this cannot carry, is a `ValueError`
naming where, so no line's meaning is silently changed. In particular (docs/reference-runs.md,
"Real traffic as cases"):

- a tool name offered twice is refused, with the same schema or not: a case offers each name
  once, and a call to a name offered with two schemas could not be validated against one;
- a message's `name` (OpenAI's participant name) is refused: no other wire has it, so a case
  could not send it to every adapter; on a tool message, a `name` equal to the function it
  answers is what the message already says, and is carried;
- any other key of a message, tool or call that is not null is refused by its path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from xpeval.adapters.contract import (
    AssistantMessage,
    ForceTool,
    Message,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolResultMessage,
    ToolSpec,
    TurnRequest,
    UserMessage,
)
from xpeval.adapters.wires._base import parse_arguments

IGNORED_KEYS = frozenset(
    {"model", "stream", "stream_options", "temperature", "top_p", "max_tokens", "max_completion_tokens",
     "seed", "n", "user", "metadata", "presence_penalty", "frequency_penalty", "stop", "logprobs",
     "top_logprobs", "logit_bias", "extra_body", "reasoning_effort", "chat_template_kwargs"}
)  # fmt: skip
"""Keys a run sets for itself (the model it plays, sampling, streaming): not part of a case."""
PARALLEL_KEY = "parallel_tool_calls"
_ROLE_ALIASES = {"_input": "system", "developer": "system"}
"""The vendor verifier's samples name a system prompt `_input`; newer OpenAI models `developer`."""
_MESSAGE_KEYS = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls"},
    "tool": {"role", "content", "tool_call_id", "name"},
}
"""What a message of each role may carry (besides keys whose value is null)."""
_TOOL_KEYS = {"type", "function"}
_FUNCTION_KEYS = {"name", "description", "parameters", "strict"}
_CALL_KEYS = {"id", "type", "function", "index"}
_CALL_FUNCTION_KEYS = {"name", "arguments"}


def request_from_body(body: Any) -> tuple[TurnRequest, list[str]]:
    """(the request, the keys it ignored) of one Chat Completions request body; ValueError naming
    the first thing it cannot carry."""
    if not isinstance(body, Mapping):
        raise ValueError(f"a request body is a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - {"messages", "tools", "tool_choice", PARALLEL_KEY} - IGNORED_KEYS)
    if unknown:
        raise ValueError(f"{unknown[0]}: not a key a case can carry")
    if body.get(PARALLEL_KEY) is False:
        raise ValueError(f"{PARALLEL_KEY}: false is not carried (every case is sent allowing parallel calls)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: a non-empty list is required")
    tools = [_tool(tool, f"tools[{i}]") for i, tool in enumerate(_list(body.get("tools"), "tools"))]
    _refuse_repeated_names(tools)
    request = TurnRequest(
        model=str(body.get("model") or "recorded"),
        messages=_messages(messages),
        tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice", "auto"), {t.name for t in tools}),
    )
    return request, sorted(set(body) & IGNORED_KEYS)


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{where}: a list is required")
    return value


def _refuse_unknown(value: Mapping[str, Any], known: set[str], where: str) -> None:
    """ValueError naming the first key of `value` outside `known` that is not null."""
    extra = sorted(str(key) for key, item in value.items() if key not in known and item is not None)
    if extra:
        raise ValueError(f"{where}.{extra[0]}: not carried by a case (only {', '.join(sorted(known))})")


def _refuse_repeated_names(tools: list[ToolSpec]) -> None:
    first: dict[str, int] = {}
    for index, tool in enumerate(tools):
        if tool.name in first:
            earlier = tools[first[tool.name]]
            how = "with the same schema" if earlier == tool else "with a different schema"
            raise ValueError(
                f"tools[{index}]: {tool.name!r} is offered again ({how} than tools[{first[tool.name]}]); "
                "a case offers each tool name once"
            )
        first[tool.name] = index


def _tool(tool: Any, where: str) -> ToolSpec:
    if not isinstance(tool, Mapping) or tool.get("type", "function") != "function":
        raise ValueError(f"{where}: only function tools can be carried")
    _refuse_unknown(tool, _TOOL_KEYS, where)
    function = tool.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise ValueError(f"{where}.function.name: required")
    _refuse_unknown(function, _FUNCTION_KEYS, f"{where}.function")
    if function.get("strict") not in (None, False):
        raise ValueError(
            f"{where}.function.strict: strict tools are not carried (a case sends its tools as-is)"
        )
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, Mapping):
        raise ValueError(f"{where}.function.parameters: a JSON Schema object is required")
    return ToolSpec(
        name=function["name"], description=str(function.get("description") or ""), parameters=dict(parameters)
    )


_CHOICE_MODES: tuple[Literal["auto", "none", "required"], ...] = ("auto", "none", "required")


def _tool_choice(value: Any, names: set[str]) -> ToolChoice:
    for mode in _CHOICE_MODES:
        if value == mode:
            return mode
    function = value.get("function") if isinstance(value, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"tool_choice: {value!r} is neither auto, none, required nor one of the tools")
    return ForceTool(name=name)


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, Mapping) and p.get("type") == "text" for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    raise ValueError(f"{where}.content: only text content can be carried")


def _messages(raw: list[Any]) -> list[Message]:
    out: list[Message] = []
    names: dict[str, str] = {}
    for i, message in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise ValueError(f"{where}: a message is a JSON object")
        role = _ROLE_ALIASES.get(str(message.get("role")), message.get("role"))
        if role in _MESSAGE_KEYS:
            _refuse_unknown(message, _MESSAGE_KEYS[str(role)], where)
        if role == "system":
            out.append(SystemMessage(content=_text(message.get("content"), where)))
        elif role == "user":
            out.append(UserMessage(content=_text(message.get("content"), where)))
        elif role == "assistant":
            out.append(_assistant(message, where, names))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in names:
                raise ValueError(f"{where}.tool_call_id: answers no call an earlier assistant message made")
            if message.get("name") not in (None, names[call_id]):
                raise ValueError(
                    f"{where}.name: {message['name']!r} is not the function the call it answers named "
                    f"({names[call_id]!r})"
                )
            out.append(
                ToolResultMessage(
                    tool_call_id=call_id, name=names[call_id], content=_text(message.get("content"), where)
                )
            )
        else:
            raise ValueError(f"{where}.role: {role!r} is not system, user, assistant or tool")
    return out


def _assistant(message: Mapping[str, Any], where: str, names: dict[str, str]) -> AssistantMessage:
    content = message.get("content")
    calls = []
    for j, call in enumerate(_list(message.get("tool_calls"), f"{where}.tool_calls")):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ValueError(f"{where}.tool_calls[{j}].function.name: required")
        _refuse_unknown(call, _CALL_KEYS, f"{where}.tool_calls[{j}]")
        _refuse_unknown(function, _CALL_FUNCTION_KEYS, f"{where}.tool_calls[{j}].function")
        if call.get("type", "function") != "function":
            raise ValueError(f"{where}.tool_calls[{j}].type: only function calls can be carried")
        raw = function.get("arguments")
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        arguments, error = parse_arguments(raw if isinstance(raw, str) else None)
        if isinstance(raw, Mapping):
            arguments, error = dict(raw), None
        calls.append(
            ToolCall(
                id=call_id,
                name=function["name"],
                arguments=arguments,
                raw_arguments=raw if isinstance(raw, str) else None,
                parse_error=error,
            )
        )
        if call_id is not None:
            names[call_id] = function["name"]
    return AssistantMessage(content=None if content is None else _text(content, where), tool_calls=calls)
