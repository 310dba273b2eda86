"""Tool calls a local model wrote as text: the harness's own parser, the same for every model (pure).

llama-server parses a reply into tool calls only in the one form it learned from the chat
template: a fenced JSON block holding a list of calls (docs/local-model.md, "The chat template,
and why"). The same calls written another way come back as text, and a run would score them
"no call": a bare JSON object without the fence, a fenced single object rather than a list,
several objects one per line. This parser sits on the server side of the local target: the
local adapters apply it to every decoded reply of a model served with the project's template,
when recording and when replaying, so a cassette keeps what llama-server sent and every model
is read by the same rules.

The rules, strict on purpose (a call named in prose stays prose):
- a call is a JSON object with a string `name` and an `arguments` object (or a string holding one);
- the whole reply, or a whole fenced block, must be calls: one object, a list of them, or several
  of either separated by whitespace or commas;
- prose is kept as the reply's text only around fenced blocks of calls, as llama-server keeps
  the text before a call; a bare call must be the whole reply.
A reply that already has tool calls, or whose text holds no such form, is returned unchanged.
"""

from __future__ import annotations

import json
import re

from xpeval.adapters.contract import ToolCall, TurnResult

_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def _as_call(value: object) -> ToolCall | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(name=value["name"], arguments=arguments, raw_arguments=json.dumps(arguments))


def calls_in(text: str) -> list[ToolCall] | None:
    """The calls `text` consists of, in order, or None when it is anything else."""
    calls: list[ToolCall] = []
    at, end = 0, len(text)
    while True:
        while at < end and (text[at].isspace() or (calls and text[at] == ",")):
            at += 1
        if at == end:
            return calls or None
        try:
            value, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        found = [_as_call(item) for item in (value if isinstance(value, list) else [value])]
        if not found or None in found:
            return None
        calls.extend(call for call in found if call is not None)


def _calls_and_prose(text: str) -> tuple[list[ToolCall], str]:
    whole = calls_in(text)
    if whole is not None:
        return whole, ""
    calls: list[ToolCall] = []
    prose: list[str] = []
    last = 0
    for block in _FENCE.finditer(text):
        inside = calls_in(block.group(1))
        if inside is None:
            continue
        prose.append(text[last : block.start()])
        calls.extend(inside)
        last = block.end()
    prose.append(text[last:])
    return calls, "".join(prose).strip()


def read_text_calls(result: TurnResult) -> TurnResult:
    """`result` with the calls its text holds as tool calls (the local adapters' reply hook)."""
    if result.tool_calls or result.error is not None or not result.text:
        return result
    calls, prose = _calls_and_prose(result.text)
    if not calls:
        return result
    finish = "tool_calls" if result.finish_reason in (None, "stop") else result.finish_reason
    return result.model_copy(update={"tool_calls": calls, "text": prose or None, "finish_reason": finish})
