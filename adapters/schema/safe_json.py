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

import enum
import json
import re
from collections.abc import Callable
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


class _State(enum.Enum):
    """What the parser expects next."""

    VALUE = "value"
    VALUE_OR_CLOSE = "value or ]"
    KEY = "key"
    KEY_OR_CLOSE = "key or }"
    COLON = ":"
    COMMA_OR_CLOSE = ", or a closing bracket"
    DONE = "end of input"


class _Kind(enum.IntEnum):
    """A token's kind: the number of the `_TOKEN` group that matched it."""

    STRING = 1
    NUMBER = 2
    PUNCT = 3
    LITERAL = 4


_VALUE_STATES = (_State.VALUE, _State.VALUE_OR_CLOSE)
_KEY_STATES = (_State.KEY, _State.KEY_OR_CLOSE)


def _parse_iteratively(text: str) -> Any:
    """A JSON parser with an explicit stack of open containers and one state variable."""
    return _Parser(text).parse()


class _Parser:
    """One handler per token kind (a punctuation mark each); errors as `json` words them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[Any] = []
        """The open containers, innermost last."""
        self.keys: list[Any] = []
        """Per open container: the key its next value goes under (objects)."""
        self.state = _State.VALUE
        self.result: Any = None

    def parse(self) -> Any:
        text = self.text
        pos = 0
        for match in _TOKEN.finditer(text):
            kind = match.lastindex
            start = match.start(kind or 0)
            if match.start() != pos or kind is None:
                raise _error("Invalid JSON token", text, pos)
            pos = match.end()
            if self.state is _State.DONE:
                raise _error("Extra data", text, start)
            token = match.group(kind)
            if kind == _Kind.PUNCT:
                _PUNCTUATION[token](self, token, start)
            elif self.state in _KEY_STATES:
                self._key(kind, token, start)
            else:
                self._scalar(kind, token, start)
        if _WHITESPACE.match(text, pos).end() != len(text):  # type: ignore[union-attr]
            raise _error("Invalid JSON token", text, pos)
        if self.state is not _State.DONE:
            raise _error("Expecting value", text, pos)
        return self.result

    def _open(self, token: str, start: int) -> None:
        if self.state not in _VALUE_STATES:
            raise _error("Expecting ',' delimiter", self.text, start)
        self.stack.append([] if token == "[" else {})
        self.keys.append(None)
        self.state = _State.VALUE_OR_CLOSE if token == "[" else _State.KEY_OR_CLOSE

    def _close(self, token: str, start: int) -> None:
        closes_list = token == "]"
        stack = self.stack
        empty_ok = _State.VALUE_OR_CLOSE if closes_list else _State.KEY_OR_CLOSE
        if (
            not stack
            or isinstance(stack[-1], list) != closes_list
            or (self.state is not _State.COMMA_OR_CLOSE and self.state is not empty_ok)
        ):
            raise _error("Unexpected closing bracket", self.text, start)
        value = stack.pop()
        self.keys.pop()
        self._place(value)

    def _comma(self, token: str, start: int) -> None:
        if self.state is not _State.COMMA_OR_CLOSE:
            raise _error("Unexpected ','", self.text, start)
        self.state = _State.VALUE if isinstance(self.stack[-1], list) else _State.KEY

    def _colon(self, token: str, start: int) -> None:
        if self.state is not _State.COLON:
            raise _error("Unexpected ':'", self.text, start)
        self.state = _State.VALUE

    def _key(self, kind: int, token: str, start: int) -> None:
        if kind != _Kind.STRING:
            raise _error("Expecting property name enclosed in double quotes", self.text, start)
        self.keys[-1] = _string(token)
        self.state = _State.COLON

    def _scalar(self, kind: int, token: str, start: int) -> None:
        if self.state not in _VALUE_STATES:
            raise _error("Expecting ',' delimiter", self.text, start)
        self._place(_SCALARS[kind](token))

    def _place(self, value: Any) -> None:
        """A finished value goes into the innermost open container (or is the document)."""
        if not self.stack:
            self.result = value
            self.state = _State.DONE
            return
        parent = self.stack[-1]
        if isinstance(parent, list):
            parent.append(value)
        else:
            parent[self.keys[-1]] = value
        self.state = _State.COMMA_OR_CLOSE


def _string(token: str) -> str:
    """A string token's value (the common case without escapes is a slice)."""
    return token[1:-1] if "\\" not in token else json.loads(token)


_SCALARS: dict[int, Callable[[str], Any]] = {
    _Kind.STRING: _string,
    _Kind.NUMBER: json.loads,
    _Kind.LITERAL: _LITERALS.__getitem__,
}
"""A scalar token's value, per kind (keys are the `_TOKEN` group numbers)."""

_PUNCTUATION: dict[str, Callable[[_Parser, str, int], None]] = {
    "[": _Parser._open,
    "{": _Parser._open,
    "]": _Parser._close,
    "}": _Parser._close,
    ",": _Parser._comma,
    ":": _Parser._colon,
}
