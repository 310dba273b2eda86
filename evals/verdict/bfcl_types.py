"""BFCL's type rules, for cases imported from BFCL (`origin` `bfcl:<id>`).

BFCL's AST checker (bfcl-eval 2026.3.23, `ast_checker.type_checker`) compares Python types
exactly: a value given for an `integer` parameter must be an `int`, so `20.0` is a type error
there even though it equals `20`; inside an array (checked one level deep) every element must
have the items' type exactly, so `[6, -3]` is no array of floats either. xpeval's own rule
(`xpeval.evals.cases.acceptable`) reads JSON numbers by value, because JSON has one number type
and a provider's serializer picks the form; a case imported from BFCL is judged by BFCL's rules
instead, so its verdicts equal the leaderboard's (tests/cases/test_bfcl_ast_parity.py). The
checker's allowances are kept:
- an `int` for a `number` (BFCL `float`) parameter is accepted, as BFCL converts it (at the top
  level only, as BFCL does);
- a value of the type of the expected answer is accepted (BFCL's "variable" rule: an answer
  listed as `20.0` accepts `20.0`);
- an array passes when its elements fit any one listed array answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xpeval.evals.cases.acceptable import OPTIONAL

BFCL_ORIGIN_PREFIX = "bfcl:"

_PYTHON_TYPES: dict[str, type] = {
    "integer": int,
    "number": float,
    "string": str,
    "boolean": bool,
    "array": list,
    "object": dict,
}
"""JSON Schema types of an imported tool -> the Python type BFCL's checker wants (its
`PYTHON_TYPE_MAPPING` read through the import's type table, `xpeval.evals.cases.bfcl`)."""


def is_bfcl_case(origin: str) -> bool:
    """Whether a case with this `origin` was imported from BFCL (and is judged by its rules)."""
    return origin.startswith(BFCL_ORIGIN_PREFIX)


def _answer_type(alternatives: Sequence[Any]) -> type | None:
    """The type of the first listed answer that is not `""` (BFCL's `get_possible_answer_type`)."""
    for alternative in alternatives:
        if alternative != OPTIONAL:
            return type(alternative)
    return None


def _fits(value: Any, wanted: type, alternatives: Sequence[Any]) -> bool:
    return type(value) is wanted or type(value) is _answer_type(alternatives)


def bfcl_type_error(value: Any, schema: Any, alternatives: Sequence[Any]) -> str | None:
    """Why `value` breaks BFCL's type rules for a parameter with this schema; None when it does not."""
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if kind == "integer" and type(value) is float and _answer_type(alternatives) is not float:
        return f"{value!r} is a float where the parameter is an integer (BFCL's type rule)"
    items = schema.get("items")
    wanted = _PYTHON_TYPES.get(items.get("type")) if isinstance(items, Mapping) else None  # type: ignore[arg-type]
    if kind != "array" or wanted is None or not isinstance(value, list):
        return None
    for alternative in alternatives:
        if not isinstance(alternative, list) or all(_fits(item, wanted, alternative) for item in value):
            return None
    return f"{value!r} holds an element that is not {items['type']} (BFCL's type rule for arrays)"  # type: ignore[index]
