"""Which constraints of one schema are missing from another (a keyword diff).

Used to count constraints a rewrite drops without saying so (the benchmark, the corpus test).
An assertion counts when it applies to some instance: the walk starts at the root and follows
schema positions and references, so unreferenced `$defs` are skipped. Bounds, `pattern`,
`format`, `const`, `multipleOf`, `uniqueItems`, `additionalProperties: false` and each `enum`
member are compared by value; `oneOf`, `not`, `if`, `propertyNames`, `patternProperties`,
`dependentRequired`, `dependentSchemas`, `contains`, `prefixItems` by name.
"""

from __future__ import annotations

from typing import Any

from adapters.schema._pointer import parse_fragment, resolve
from adapters.schema._values import canonical
from adapters.schema._vocab import DEFS, LIST_SCHEMA, MAP_SCHEMA, SINGLE_SCHEMA

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
            if key in BY_VALUE:
                found.add((key, canonical(value)))
            elif key in BY_NAME:
                found.add((key, ""))
            elif key == "enum" and isinstance(value, list):
                found.update(("enum", canonical(v)) for v in value)
            elif key == "additionalProperties" and value is False:
                found.add((key, "false"))
            if key == "$ref" and isinstance(value, str):
                tokens = parse_fragment(value)
                if tokens is not None:
                    ok, target = resolve(schema, tokens)
                    if ok:
                        stack.append(target)
            elif key in SINGLE_SCHEMA:
                stack.append(value)
            elif key in LIST_SCHEMA and isinstance(value, list):
                stack.extend(value)
            elif key in MAP_SCHEMA and key not in DEFS and isinstance(value, dict):
                stack.extend(value.values())
    return found


def dropped_constraints(before: Any, after: Any) -> set[str]:
    """Keywords of assertions in `before` that `after` no longer has."""
    return {key for key, _ in assertions(before) - assertions(after)}
