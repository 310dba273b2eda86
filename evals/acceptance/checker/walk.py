"""Iterative walks over JSON Schema documents (never recursive: a sent schema may be hostile).

Only subschema positions are visited (`properties/*`, `items`, `anyOf/*`, `$defs/*` ...); values of
`enum`, `const`, `default` and `examples` are data, not schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_SINGLES = (
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contentSchema",
)
_SUBSCHEMA_KEYWORDS = frozenset((*_SCHEMA_MAPS, *_SCHEMA_LISTS, "items", *_SCHEMA_SINGLES))


def escape(token: str) -> str:
    """One JSON pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def to_pointer(tokens: Iterable[object]) -> str:
    """A JSON pointer from unescaped reference tokens ("" for none: the root)."""
    return "".join("/" + escape(str(token)) for token in tokens)


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


@dataclass(frozen=True)
class Node:
    """A subschema found by the walk."""

    schema: Any
    path: tuple[str, ...]
    """Reference tokens from the schema root (unescaped)."""
    via: str | None
    """The keyword that leads here ("properties", "items", "anyOf", "$defs" ...); None at the root."""
    object_depth: int
    """Object schemas on the way here, this one included when it is one (the root object is 1)."""

    @property
    def pointer(self) -> str:
        return to_pointer(self.path)


def schema_types(schema: dict[str, Any]) -> list[str]:
    """The type names a schema node declares (a string or a list; others ignored)."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def is_object_schema(schema: dict[str, Any]) -> bool:
    return "object" in schema_types(schema) or isinstance(schema.get("properties"), dict)


def children(schema: dict[str, Any]) -> Iterator[tuple[str, tuple[str, ...], Any]]:
    """(keyword, path tokens below this node, subschema) for every direct subschema."""
    if _SUBSCHEMA_KEYWORDS.isdisjoint(schema):
        return  # a leaf (most nodes of a catalog): no keyword to look up one by one
    for keyword in _SCHEMA_MAPS:
        mapping = schema.get(keyword)
        if isinstance(mapping, dict):
            for key, sub in mapping.items():
                yield keyword, (keyword, str(key)), sub
    for keyword in _SCHEMA_LISTS:
        items = schema.get(keyword)
        if isinstance(items, list):
            for index, sub in enumerate(items):
                yield keyword, (keyword, str(index)), sub
    items = schema.get("items")
    if isinstance(items, list):
        for index, sub in enumerate(items):
            yield "items", ("items", str(index)), sub
    elif items is not None:
        yield "items", ("items",), items
    for keyword in _SCHEMA_SINGLES:
        if keyword in schema:
            yield keyword, (keyword,), schema[keyword]


def walk(root: Any) -> Iterator[Node]:
    """Every subschema of `root`, depth first, the root first. Dict nodes are descended into;
    booleans and malformed values are yielded but have no children."""
    start_depth = 1 if isinstance(root, dict) and is_object_schema(root) else 0
    stack: list[Node] = [Node(root, (), None, start_depth)]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node.schema, dict):
            continue
        below: list[Node] = []
        for keyword, tokens, sub in children(node.schema):
            depth = node.object_depth + (1 if isinstance(sub, dict) and is_object_schema(sub) else 0)
            below.append(Node(sub, node.path + tokens, keyword, depth))
        stack.extend(reversed(below))


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value (containers only), counting no further than `limit + 1`.
    Level by level: one list of the members one level down at a time (the checker and the
    acceptance measurement ask this of every definition, on 10,000 tools too)."""
    level: list[Any] = [value]
    depth = 0
    while True:
        below: list[Any] = []
        containers = False
        for current in level:
            if isinstance(current, dict):
                containers = True
                below.extend(current.values())
            elif isinstance(current, list):
                containers = True
                below.extend(current)
        if not containers:
            return depth
        depth += 1
        if depth > limit:
            return depth
        level = below


def resolve_local(root: Any, ref: str) -> tuple[bool, Any]:
    """(found, target) for a same-document reference "#" or "#/a/b"; (False, None) otherwise."""
    if ref == "#":
        return True, root
    if not ref.startswith("#/"):
        return False, None
    current = root
    for raw in ref[2:].split("/"):
        token = unescape(raw)
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return False, None
    return True, current
