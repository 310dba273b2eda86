"""JSON values compared the way JSON Schema compares them, without recursion.

Python's `==` says `1 == True` and recurses on nested lists (a hostile `enum` value nested
thousands deep would raise RecursionError); JSON Schema says `1 != true` and `1 == 1.0`.
"""

from __future__ import annotations

import json
from typing import Any

_ENCODE_STR = json.JSONEncoder(ensure_ascii=False).encode


def canonical(value: Any) -> str:
    """A string that is equal for two values exactly when JSON Schema calls them equal."""
    if isinstance(value, str):
        return "s" + value
    if value is None or isinstance(value, bool):
        return "l" + repr(value)
    if isinstance(value, (int, float)):
        return "n" + _number(value)
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Mark):
            out.append(item.text)
        elif isinstance(item, dict):
            out.append("{")
            stack.append(_Mark("}"))
            keys = sorted(item)
            for index in range(len(keys) - 1, -1, -1):
                stack.append(item[keys[index]])
                stack.append(_Mark(_ENCODE_STR(keys[index]) + ":"))
                if index:
                    stack.append(_Mark(","))
        elif isinstance(item, list):
            out.append("[")
            stack.append(_Mark("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Mark(","))
        elif isinstance(item, str):
            out.append(_ENCODE_STR(item))
        elif item is None or isinstance(item, bool):
            out.append(json.dumps(item))
        elif isinstance(item, (int, float)):
            out.append(_number(item))
        else:
            out.append(repr(item))
    return "c" + "".join(out)


class _Mark:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _number(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return str(int(value))
    return repr(value)


def json_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    return canonical(a) == canonical(b)


def literal_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a literal (`default`, `enum` member, ...) nests deeper than `limit` containers."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False
