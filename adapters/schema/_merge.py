"""Combining two values of one keyword when two schemas apply to the same node.

Two situations put two schemas on one node:
- a `$ref` with sibling keywords that a dialect must inline (the Moonshot rule in
  adapters/schema/RULES.md): the node's own value wins; it is exact when the node's value is at
  least as tight as the target's, otherwise the target's constraint was relaxed and that is a
  loss;
- an `allOf` that a dialect must flatten: both apply, so the result is their intersection when
  one can be computed (tighter bound, common types, common enum members), else a loss.

`required` (union) and the schema-valued keywords (merged as subschemas) are handled by the
walker; this module only sees scalar keywords.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from xpeval.adapters.schema._values import canonical, json_equal
from xpeval.adapters.schema._vocab import MAX_BOUNDS, MIN_BOUNDS, TYPE_ORDER, admits, is_assertion, type_set

NOTHING: Any = object()
"""No exact intersection exists."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# One handler per keyword family, for a pair of values that are not equal. Numeric comparisons
# need both values to be numbers; a malformed value implies and intersects nothing.


def _at_least_implies(a: Any, b: Any) -> bool:
    return _is_number(a) and _is_number(b) and a >= b


def _at_most_implies(a: Any, b: Any) -> bool:
    return _is_number(a) and _is_number(b) and a <= b


def _type_implies(a: Any, b: Any) -> bool:
    ta, tb = type_set(a), type_set(b)
    return ta is not None and tb is not None and all(admits(tb, t) for t in ta)


def _enum_implies(a: Any, b: Any) -> bool:
    if not isinstance(a, list) or not isinstance(b, list):
        return False
    allowed = {canonical(x) for x in b}
    return all(canonical(x) in allowed for x in a)


def _multiple_of_implies(a: Any, b: Any) -> bool:
    return _is_number(a) and _is_number(b) and b != 0 and float(a / b).is_integer()


def _unique_items_implies(a: Any, b: Any) -> bool:
    return a is True or b is False


_IMPLIES: dict[str, Callable[[Any, Any], bool]] = {
    **{keyword: _at_least_implies for keyword in MIN_BOUNDS},
    **{keyword: _at_most_implies for keyword in MAX_BOUNDS},
    "type": _type_implies,
    "enum": _enum_implies,
    "multipleOf": _multiple_of_implies,
    "uniqueItems": _unique_items_implies,
}


def implies(keyword: str, a: Any, b: Any) -> bool:
    """Whether constraint `keyword: a` admits no value that `keyword: b` refuses."""
    if json_equal(a, b):
        return True
    handler = _IMPLIES.get(keyword)
    return handler is not None and handler(a, b)


def _at_least_both(a: Any, b: Any) -> Any:
    return max(a, b) if _is_number(a) and _is_number(b) else NOTHING


def _at_most_both(a: Any, b: Any) -> Any:
    return min(a, b) if _is_number(a) and _is_number(b) else NOTHING


def _type_both(a: Any, b: Any) -> Any:
    ta, tb = type_set(a), type_set(b)
    if ta is None or tb is None:
        return NOTHING
    common = {t for t in ta if admits(tb, t)} | {t for t in tb if admits(ta, t)}
    if not common:
        return NOTHING
    ordered = [t for t in TYPE_ORDER if t in common]
    return ordered[0] if len(ordered) == 1 else ordered


def _enum_both(a: Any, b: Any) -> Any:
    if not isinstance(a, list) or not isinstance(b, list):
        return NOTHING
    allowed = {canonical(x) for x in b}
    return [x for x in a if canonical(x) in allowed]


def _multiple_of_both(a: Any, b: Any) -> Any:
    if not _is_number(a) or not _is_number(b):
        return NOTHING
    if isinstance(a, int) and isinstance(b, int) and a > 0 and b > 0:
        return math.lcm(a, b)
    if _multiple_of_implies(a, b):
        return a
    if _multiple_of_implies(b, a):
        return b
    return NOTHING


def _unique_items_both(a: Any, b: Any) -> Any:
    return a or b if isinstance(a, bool) and isinstance(b, bool) else NOTHING


_INTERSECT: dict[str, Callable[[Any, Any], Any]] = {
    **{keyword: _at_least_both for keyword in MIN_BOUNDS},
    **{keyword: _at_most_both for keyword in MAX_BOUNDS},
    "type": _type_both,
    "enum": _enum_both,
    "multipleOf": _multiple_of_both,
    "uniqueItems": _unique_items_both,
}


def intersect(keyword: str, a: Any, b: Any) -> Any:
    """The single value of `keyword` that means `a` and `b` together, or NOTHING."""
    if json_equal(a, b):
        return a
    handler = _INTERSECT.get(keyword)
    return NOTHING if handler is None else handler(a, b)


def node_wins(keyword: str, node_value: Any, target_value: Any) -> tuple[Any, bool]:
    """The node's own value wins over its `$ref` target's (adapters/schema/RULES.md). Second
    item: exact."""
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
