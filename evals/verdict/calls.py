"""A call as a verdict reads it: a canonical ToolCall or a plain mapping, with its parse error."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xpeval.adapters.contract import ToolCall

CallLike = ToolCall | Mapping[str, Any]
"""A canonical ToolCall, or a plain dict with `name` and `arguments` (a dict or a JSON text)."""


@dataclass(frozen=True)
class ReadCall:
    name: str
    arguments: Mapping[str, Any]
    parse_error: str | None


def read_call(call: CallLike) -> ReadCall:
    if isinstance(call, ToolCall):
        return ReadCall(call.name, call.arguments, call.parse_error)
    if not isinstance(call, Mapping):
        raise TypeError(
            f"a tool call must be a ToolCall or a mapping with name and arguments, got {type(call).__name__}"
        )
    name = call.get("name")
    arguments = call.get("arguments", {})
    parse_error = call.get("parse_error")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            arguments, parse_error = {}, f"arguments are not valid JSON: {exc.msg}"
    if not isinstance(arguments, Mapping):
        arguments, parse_error = {}, f"arguments are a {type(arguments).__name__}, not an object"
    return ReadCall(str(name) if name is not None else "", arguments, parse_error)


__all__ = ["CallLike", "ReadCall", "read_call"]
