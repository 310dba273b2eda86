"""JSON pointers (RFC 6901): built cheaply during a walk, resolved inside one document.

A walk builds pointers as linked tuples `(parent, token)` (None is the root) and turns one
into a string only when it reports a loss, so the common path allocates one small tuple.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

Ptr = tuple[Any, str | int] | None


def child(parent: Ptr, *tokens: str | int) -> Ptr:
    for token in tokens:
        parent = (parent, token)
    return parent


def tokens_of(ptr: Ptr) -> list[str | int]:
    out: list[str | int] = []
    while ptr is not None:
        ptr, token = ptr
        out.append(token)
    out.reverse()
    return out


def escape(token: str | int) -> str:
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def to_str(ptr: Ptr) -> str:
    parts: list[str] = []
    while ptr is not None:
        ptr, token = ptr
        parts.append(escape(token))
    if not parts:
        return ""
    parts.append("")
    parts.reverse()
    return "/".join(parts)


def join(pointer: str, *tokens: str | int) -> str:
    return pointer + "".join("/" + escape(t) for t in tokens)


def parse_fragment(ref: str) -> list[str] | None:
    """The tokens of a same-document reference (`#`, `#/a/b`), or None for anything else
    (another document, an `$anchor` name, a malformed pointer)."""
    if not ref.startswith("#"):
        return None
    fragment = unquote(ref[1:])
    if fragment == "":
        return []
    if not fragment.startswith("/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/")]


def resolve(document: Any, tokens: list[str]) -> tuple[bool, Any]:
    """Follow `tokens` from `document`: (found, value)."""
    node = document
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                return False, None
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or (len(token) > 1 and token[0] == "0") or int(token) >= len(node):
                return False, None
            node = node[int(token)]
        else:
            return False, None
    return True, node
