"""Read JSON of any nesting depth without RecursionError.

Python's `json` module recurses: `json.loads` of a document nested ~1,000 deep raises
RecursionError, and a hostile tool schema can be nested 20,000 deep. `loads` measures the
nesting first (one linear scan, no recursion) and uses the fast C parser when the document is
shallow, an iterative parser otherwise. The dialect passes then close such a schema by their
depth budget. `max_depth` refuses deeper documents with a clear `JsonDepthError` instead.

Hand-written because neither the standard library nor the project's dependencies parse JSON
iteratively.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["JsonDepthError", "load_path", "loads", "nesting_depth", "text_nesting_depth"]

_C_PARSER_SAFE_DEPTH = 400
"""Below this the C parser cannot hit the interpreter's recursion limit (default 1,000)."""

_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
        (?P<string>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")
      | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
      | (?P<punct>[\[\]{},:])
      | (?P<literal>true|false|null)
    )""",
    re.X,
)
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


class JsonDepthError(ValueError):
    """The document nests deeper than the caller allows."""


def text_nesting_depth(text: str, *, stop_above: int | None = None) -> int:
    """How deep arrays and objects nest in JSON `text` (strings are skipped, no recursion).
    With `stop_above`, the scan stops at the first level deeper than that."""
    depth = deepest = 0
    for match in _STRUCTURE.finditer(text):
        char = match.group()
        if char == "[" or char == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    break
        elif char == "]" or char == "}":
            depth -= 1
    return deepest


def nesting_depth(value: Any) -> int:
    """How deep lists and dicts nest in a decoded value (no recursion)."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return deepest


def loads(text: str | bytes, *, max_depth: int | None = None) -> Any:
    """Parse JSON text of any depth. Raises `json.JSONDecodeError` for invalid JSON and
    `JsonDepthError` when it nests deeper than `max_depth`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    if max_depth is not None:
        depth = text_nesting_depth(text, stop_above=max_depth)
        if depth > max_depth:
            raise JsonDepthError(
                f"JSON nests more than {max_depth} levels deep; at most {max_depth} are accepted"
            )
    else:
        depth = text_nesting_depth(text, stop_above=_C_PARSER_SAFE_DEPTH)
    if depth < _C_PARSER_SAFE_DEPTH:
        return json.loads(text)
    return _parse_iteratively(text)


def load_path(path: str | Path, *, max_depth: int | None = None) -> Any:
    """Read and parse a JSON file of any depth (see `loads`)."""
    return loads(Path(path).read_bytes(), max_depth=max_depth)


def _error(message: str, text: str, pos: int) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, text, pos)


def _parse_iteratively(text: str) -> Any:
    """A JSON parser with an explicit stack of open containers and one state variable."""
    stack: list[Any] = []
    keys: list[Any] = []
    state = _VALUE
    result: Any = None
    pos = 0
    for match in _TOKEN.finditer(text):
        kind = match.lastindex
        start = match.start(kind or 0)
        if match.start() != pos or kind is None:
            raise _error("Invalid JSON token", text, pos)
        pos = match.end()
        token = match.group(kind)
        if state == _DONE:
            raise _error("Extra data", text, start)
        if kind == _PUNCT:
            if token == "]" or token == "}":
                closes_list = token == "]"
                if (
                    not stack
                    or isinstance(stack[-1], list) != closes_list
                    or (
                        state != _COMMA_OR_CLOSE
                        and state != (_VALUE_OR_CLOSE if closes_list else _KEY_OR_CLOSE)
                    )
                ):
                    raise _error("Unexpected closing bracket", text, start)
                value = stack.pop()
                keys.pop()
            elif token == ",":
                if state != _COMMA_OR_CLOSE:
                    raise _error("Unexpected ','", text, start)
                state = _VALUE if isinstance(stack[-1], list) else _KEY
                continue
            elif token == ":":
                if state != _COLON:
                    raise _error("Unexpected ':'", text, start)
                state = _VALUE
                continue
            else:  # "[" or "{"
                if state != _VALUE and state != _VALUE_OR_CLOSE:
                    raise _error("Expecting ',' delimiter", text, start)
                stack.append([] if token == "[" else {})
                keys.append(None)
                state = _VALUE_OR_CLOSE if token == "[" else _KEY_OR_CLOSE
                continue
        elif state in (_KEY, _KEY_OR_CLOSE):
            if kind != _STRING:
                raise _error("Expecting property name enclosed in double quotes", text, start)
            keys[-1] = token[1:-1] if "\\" not in token else json.loads(token)
            state = _COLON
            continue
        elif state != _VALUE and state != _VALUE_OR_CLOSE:
            raise _error("Expecting ',' delimiter", text, start)
        elif kind == _STRING:
            value = token[1:-1] if "\\" not in token else json.loads(token)
        elif kind == _LITERAL:
            value = _LITERALS[token]
        else:
            value = json.loads(token)
        if not stack:
            result = value
            state = _DONE
            continue
        parent = stack[-1]
        if isinstance(parent, list):
            parent.append(value)
        else:
            parent[keys[-1]] = value
        state = _COMMA_OR_CLOSE
    if _WHITESPACE.match(text, pos).end() != len(text):  # type: ignore[union-attr]
        raise _error("Invalid JSON token", text, pos)
    if state != _DONE:
        raise _error("Expecting value", text, pos)
    return result


_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _COMMA_OR_CLOSE, _DONE = range(7)
_STRING, _NUMBER, _PUNCT, _LITERAL = 1, 2, 3, 4
