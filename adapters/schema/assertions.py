"""Which constraints of one schema are missing from another (a keyword diff).

Used to count constraints a rewrite drops without saying so (the benchmark, the corpus test).
An assertion counts when it applies to some instance: the walk starts at the root and follows
schema positions and references, so unreferenced `$defs` are skipped. Bounds, `pattern`,
`format`, `const`, `multipleOf`, `uniqueItems`, `additionalProperties: false` and each `enum`
member are compared by value; `oneOf`, `not`, `if`, `propertyNames`, `patternProperties`,
`dependentRequired`, `dependentSchemas`, `contains`, `prefixItems` by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from xpeval.adapters.schema._pointer import parse_fragment, resolve
from xpeval.adapters.schema._values import canonical
from xpeval.adapters.schema._vocab import DEFS, LIST_SCHEMA, MAP_SCHEMA, SINGLE_SCHEMA

BY_VALUE = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "pattern",
    "format",
    "const",
    "uniqueItems",
)
BY_NAME = (
    "oneOf",
    "not",
    "if",
    "propertyNames",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "contains",
    "prefixItems",
)


def assertions(schema: Any) -> set[tuple[str, str]]:
    """The assertions that apply to an instance: walked from the root through schema positions
    and references (unreferenced `$defs` constrain nothing and are skipped)."""
    found: set[tuple[str, str]] = set()
    seen: set[int] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        for key, value in node.items():
            record = _RECORD.get(key)
            if record is not None:
                found.update(record(key, value))
            stack.extend(_subschemas(schema, key, value))
    return found


# One recorder per keyword family: the (keyword, value) entries a keyword asserts.


def _by_value(key: str, value: Any) -> Iterable[tuple[str, str]]:
    return ((key, canonical(value)),)


def _by_name(key: str, value: Any) -> Iterable[tuple[str, str]]:
    return ((key, ""),)


def _enum_members(key: str, value: Any) -> Iterable[tuple[str, str]]:
    return [("enum", canonical(v)) for v in value] if isinstance(value, list) else ()


def _closed_object(key: str, value: Any) -> Iterable[tuple[str, str]]:
    return ((key, "false"),) if value is False else ()


_RECORD: dict[str, Callable[[str, Any], Iterable[tuple[str, str]]]] = {
    **{key: _by_value for key in BY_VALUE},
    **{key: _by_name for key in BY_NAME},
    "enum": _enum_members,
    "additionalProperties": _closed_object,
}


def _subschemas(schema: Any, key: str, value: Any) -> Iterable[Any]:
    """The schemas keyword `key` applies to an instance (a reference's target included)."""
    if key == "$ref":
        tokens = parse_fragment(value) if isinstance(value, str) else None
        found, target = resolve(schema, tokens) if tokens is not None else (False, None)
        return (target,) if found else ()
    if key in SINGLE_SCHEMA:
        return (value,)
    if key in LIST_SCHEMA and isinstance(value, list):
        return value
    if key in MAP_SCHEMA and key not in DEFS and isinstance(value, dict):
        return value.values()
    return ()


def dropped_constraints(before: Any, after: Any) -> set[str]:
    """Keywords of assertions in `before` that `after` no longer has."""
    return {key for key, _ in assertions(before) - assertions(after)}
