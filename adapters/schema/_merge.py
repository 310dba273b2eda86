"""Combining two values of one keyword when two schemas apply to the same node.

Two situations put two schemas on one node:
- a `$ref` with sibling keywords that a dialect must inline (seed 002, Moonshot decision): the
  node's own value wins; it is exact when the node's value is at least as tight as the target's,
  otherwise the target's constraint was relaxed and that is a loss;
- an `allOf` that a dialect must flatten: both apply, so the result is their intersection when
  one can be computed (tighter bound, common types, common enum members), else a loss.

`required` (union) and the schema-valued keywords (merged as subschemas) are handled by the
walker; this module only sees scalar keywords.
"""

from __future__ import annotations

import math
from typing import Any

from adapters.schema._values import canonical, json_equal
from adapters.schema._vocab import MAX_BOUNDS, MIN_BOUNDS, TYPE_ORDER, admits, is_assertion, type_set

NOTHING: Any = object()
"""No exact intersection exists."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def implies(keyword: str, a: Any, b: Any) -> bool:
    """Whether constraint `keyword: a` admits no value that `keyword: b` refuses."""
    if json_equal(a, b):
        return True
    if keyword in MIN_BOUNDS:
        return _is_number(a) and _is_number(b) and a >= b
    if keyword in MAX_BOUNDS:
        return _is_number(a) and _is_number(b) and a <= b
    if keyword == "type":
        ta, tb = type_set(a), type_set(b)
        return ta is not None and tb is not None and all(admits(tb, t) for t in ta)
    if keyword == "enum":
        if not isinstance(a, list) or not isinstance(b, list):
            return False
        allowed = {canonical(x) for x in b}
        return all(canonical(x) in allowed for x in a)
    if keyword == "multipleOf":
        return _is_number(a) and _is_number(b) and b != 0 and float(a / b).is_integer()
    if keyword == "uniqueItems":
        return a is True or b is False
    return False


def intersect(keyword: str, a: Any, b: Any) -> Any:
    """The single value of `keyword` that means `a` and `b` together, or NOTHING."""
    if json_equal(a, b):
        return a
    if keyword in MIN_BOUNDS and _is_number(a) and _is_number(b):
        return max(a, b)
    if keyword in MAX_BOUNDS and _is_number(a) and _is_number(b):
        return min(a, b)
    if keyword == "type":
        ta, tb = type_set(a), type_set(b)
        if ta is None or tb is None:
            return NOTHING
        common = {t for t in ta if admits(tb, t)} | {t for t in tb if admits(ta, t)}
        if not common:
            return NOTHING
        ordered = [t for t in TYPE_ORDER if t in common]
        return ordered[0] if len(ordered) == 1 else ordered
    if keyword == "enum" and isinstance(a, list) and isinstance(b, list):
        allowed = {canonical(x) for x in b}
        return [x for x in a if canonical(x) in allowed]
    if keyword == "multipleOf" and _is_number(a) and _is_number(b):
        if isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0:
            return math.lcm(a, b)
        if implies(keyword, a, b):
            return a
        if implies(keyword, b, a):
            return b
        return NOTHING
    if keyword == "uniqueItems" and isinstance(a, bool) and isinstance(b, bool):
        return a or b
    return NOTHING


def node_wins(keyword: str, node_value: Any, target_value: Any) -> tuple[Any, bool]:
    """Seed 002: the node's own value wins over its `$ref` target's. Second item: exact."""
    if not is_assertion(keyword):
        return node_value, True
    return node_value, implies(keyword, node_value, target_value)


def both_apply(keyword: str, a: Any, b: Any) -> tuple[Any, bool]:
    """allOf: both constraints hold. Second item: exact (False keeps `a` and loses `b`)."""
    if not is_assertion(keyword):
        return a, True
    value = intersect(keyword, a, b)
    if value is NOTHING:
        return a, False
    return value, True
