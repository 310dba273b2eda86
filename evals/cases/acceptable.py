"""What a list of acceptable values accepts: BFCL's AST-checker value rules, made recursive.

An expected argument is a list of alternatives; a value is acceptable when it matches one:
- strings match after BFCL's normalization (spaces and `,./-_*^` removed, lower case, `'`
  read as `"`), so "April 1, 2024" and "april 1 2024" are the same answer;
- numbers match by value: an int is accepted where a float is expected and the other way
  round (JSON has one number type, so `5` and `5.0` are one value; BFCL's Python checker
  rejects `5.0` for an integer parameter, which only penalizes how a provider serializes, so
  only cases imported from BFCL are judged that way: `xpeval.evals.verdict.bfcl_types`);
- booleans are not numbers: `true` never matches `1`, and `1` never matches `true`;
- `null` matches only `null`;
- a list matches a list alternative of the same length element by element (order counts);
- a dict matches a `{key: [alternatives]}` alternative when each of its keys is listed there
  with an acceptable value, and every listed key it lacks has `""` among its alternatives.
`""` among the alternatives of an argument means it may be omitted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

OPTIONAL = ""
"""In a list of acceptable values, `""` means the argument may be left out (BFCL's convention)."""

_IGNORED = re.compile(r"[ ,./\-_*^]")


def normalize_string(text: str) -> str:
    """BFCL's `standardize_string`: drop spaces and `,./-_*^`, lower-case, `'` -> `"`."""
    return _IGNORED.sub("", text).lower().replace("'", '"')


_NUMBERS = (int, float)  # a tuple: `int | float` would make a union anew at every call


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBERS) and not isinstance(value, bool)


def value_matches(value: Any, alternative: Any) -> bool:
    """Whether `value` matches one acceptable alternative (see the module docstring)."""
    if isinstance(alternative, bool):
        return isinstance(value, bool) and value is alternative
    if _is_number(alternative):
        return _is_number(value) and value == alternative
    if isinstance(alternative, str):
        return isinstance(value, str) and normalize_string(value) == normalize_string(alternative)
    if alternative is None:
        return value is None
    if isinstance(alternative, Mapping):
        return isinstance(value, Mapping) and arguments_fit_pattern(value, alternative, exhaustive=True)
    if isinstance(alternative, Sequence):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(alternative)
            and all(value_matches(v, a) for v, a in zip(value, alternative, strict=True))
        )
    return bool(value == alternative)


def value_acceptable(value: Any, alternatives: Sequence[Any]) -> bool:
    """Whether `value` matches any of `alternatives`."""
    return any(value_matches(value, alternative) for alternative in alternatives)


def arguments_fit_pattern(
    arguments: Mapping[str, Any], pattern: Mapping[str, Sequence[Any]], *, exhaustive: bool = False
) -> bool:
    """Whether every key of `pattern` is present with an acceptable value (or absent and optional).

    With `exhaustive`, keys of `arguments` that the pattern does not list make it fail too
    (used for nested objects; scripted-output patterns only look at the keys they list).
    """
    if exhaustive and any(key not in pattern for key in arguments):
        return False
    for key, alternatives in pattern.items():
        if key in arguments:
            if not value_acceptable(arguments[key], alternatives):
                return False
        elif OPTIONAL not in alternatives:
            return False
    return True
