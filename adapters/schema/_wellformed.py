"""What every dialect checks first on a node: values no JSON Schema validator would take.

Such a value (the BFCL pseudo-type `dict`, `required: "a"`) refuses the schema with the
reason; the two draft-04 forms 2020-12 spells differently are normalised; a literal nested past
the literal budget is dropped and reported. One small check per keyword family.
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._values import literal_depth_exceeds
from xpeval.adapters.schema._vocab import JSON_TYPES
from xpeval.adapters.schema._walk import Refused, View

_MISSING: Any = object()
_DRAFT4_BOUNDS = (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum"))
_LITERALS = ("enum", "const", "default", "examples")
_LITERAL_SET = frozenset(_LITERALS)
_CHECKED = frozenset({"required", "enum", "exclusiveMinimum", "exclusiveMaximum", *_LITERALS})
"""The keywords the checks after `type` look at (most nodes have none of them)."""


def check_common(e: Engine, view: View) -> None:
    """Refuse values that no JSON Schema validator would take (the BFCL pseudo-types among
    them), and normalise the two draft-04 forms 2020-12 spells differently."""
    kw = view.kw
    t = kw.get("type", _MISSING)
    if t is not _MISSING and not (type(t) is str and t in JSON_TYPES):  # (the common case inline)
        _check_type(view, t)
    if _CHECKED.isdisjoint(kw):
        return
    # each family's check only where the node has its keywords (this runs once per node)
    if "required" in kw:
        _check_required(view, kw["required"])
    if "enum" in kw and not isinstance(kw["enum"], list):
        raise Refused(R.NOT_JSON_SCHEMA, f"enum at {view.at('enum')} must be an array")
    if "exclusiveMinimum" in kw or "exclusiveMaximum" in kw:
        _draft4_bounds(kw)
    if not _LITERAL_SET.isdisjoint(kw):
        _drop_deep_literals(e, view)


def _check_type(view: View, t: Any) -> None:
    names = [t] if isinstance(t, str) else t
    if not isinstance(names, list) or not names:
        raise Refused(
            R.NOT_JSON_SCHEMA, f"type at {view.at('type')} must be a type name or a non-empty array of them"
        )
    for name in names:
        if not isinstance(name, str) or name not in JSON_TYPES:
            raise Refused(
                R.NOT_JSON_SCHEMA,
                f"type {name!r} at {view.at('type')} is not a JSON Schema type "
                "(one of array, boolean, integer, null, number, object, string)",
            )


def _check_required(view: View, required: Any) -> None:
    if required == () or (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        return
    raise Refused(R.NOT_JSON_SCHEMA, f"required at {view.at('required')} must be an array of property names")


def _draft4_bounds(kw: dict[str, Any]) -> None:
    """draft-04: `exclusiveMinimum: true` modifies `minimum`; 2020-12 spells it as a number."""
    for bound, inclusive in _DRAFT4_BOUNDS:
        flag = kw.get(bound)
        if flag is True or flag is False:
            del kw[bound]
            if flag and inclusive in kw:
                kw[bound] = kw.pop(inclusive)


def _drop_deep_literals(e: Engine, view: View) -> None:
    kw = view.kw
    limit = e.budgets.max_literal_depth
    for key in _LITERALS:
        value = kw.get(key)
        if type(value) in (list, dict) and literal_depth_exceeds(value, limit):
            del kw[key]
            e.loss(
                view.at(key), key, "closed-by-budget", f"literal nests deeper than {limit} levels: dropped"
            )
