"""Shaping steps several dialects share: types, dropped keywords, notes in the description.

Each step works on the view of one node (`View.kw`) and reports what it weakens.
"""

from __future__ import annotations

import json
from typing import Any

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._vocab import (
    ALL_TYPED_KEYWORDS,
    SCHEMA_POSITIONS,
    TYPE_ORDER,
    TYPED_KEYWORDS,
    is_assertion,
    json_type_of,
    type_set,
)
from xpeval.adapters.schema._walk import Task, View

# --------------------------------------------------------------------------- types


def inferred_type(values: list[Any]) -> str | list[str] | None:
    """The narrowest `type` that admits exactly the JSON types of `values` (enum/const)."""
    found = {json_type_of(v) for v in values}
    if not found:
        return None
    if "number" in found:
        found.discard("integer")
    ordered = [t for t in TYPE_ORDER if t in found]
    return ordered[0] if len(ordered) == 1 else ordered


def families_used(kw: dict[str, Any]) -> set[str]:
    """The instance types the node's type-specific keywords talk about."""
    used = set()
    for family, keywords in TYPED_KEYWORDS.items():
        if family != "integer" and any(k in kw for k in keywords):
            used.add(family)
    return used


def narrow_to_type(e: Engine, view: View, task: Task, family: str) -> None:
    """An untyped node whose keywords all talk about one type is sent with that type: values of
    other types can no longer be sent. Reported as `narrowed`, and registered so a measurement
    can tell this refusal from a false one."""
    e.narrowed_types.append(e.out_pointer(task.out_ptr))
    e.loss(
        P.to_str(view.ptr),
        "type",
        "narrowed",
        f"untyped schema with only {family} keywords sent as type {family!r}: values of other types are "
        "refused now",
    )


def drop_inapplicable(view: View, types: frozenset[str] | None) -> None:
    """Drop keywords of instance types the node's `type` excludes: they constrain nothing (no loss)."""
    if types is None:
        return
    inapplicable = _INAPPLICABLE.get(types)
    if inapplicable is None:
        applicable: set[str] = set()
        for t in types:
            applicable |= TYPED_KEYWORDS.get(t, frozenset())
        inapplicable = _INAPPLICABLE[types] = ALL_TYPED_KEYWORDS - applicable
    kw = view.kw
    for key in [k for k in kw if k in inapplicable]:
        del kw[key]


_INAPPLICABLE: dict[frozenset[str], frozenset[str]] = {}
"""Per `type` set: the typed keywords that constrain none of its types (computed once)."""


def accepts_null(out: Any) -> bool:
    """Whether an output node certainly accepts null (conservative)."""
    if out is True or out == {}:
        return True
    if not isinstance(out, dict):
        return False
    if "$ref" in out or "allOf" in out or "not" in out:
        return False
    if "const" in out:
        return out["const"] is None
    if "enum" in out and not any(v is None for v in out["enum"]):
        return False
    types = type_set(out.get("type"))
    if types is not None and "null" not in types:
        return False
    if "anyOf" in out:
        return any(accepts_null(m) for m in out["anyOf"])
    if "oneOf" in out:
        return False
    return types is not None or "enum" in out


# --------------------------------------------------------------------------- dropping keywords


def drop_keywords(
    e: Engine,
    view: View,
    keywords: Any,
    *,
    reason: str,
    to_description: dict[str, Any] | None = None,
) -> None:
    """Remove `keywords` from the view, reporting each assertion dropped (or moved into the
    description, when `to_description` collects them)."""
    kw = view.kw
    for key in [k for k in kw if k in keywords]:
        value = kw.pop(key)
        if not is_assertion(key):
            continue
        if to_description is not None and key not in SCHEMA_POSITIONS:
            to_description[key] = value
            e.loss(view.at(key), key, "moved-to-description", f"{reason}: stated in the description instead")
        else:
            e.loss(view.at(key), key, "dropped", reason)


def add_description(out: dict[str, Any], note: str) -> None:
    """Append a note to a node's description (the model still reads what the validator drops)."""
    current = out.get("description")
    out["description"] = f"{current} ({note})" if isinstance(current, str) and current else note


def format_constraints(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {_json(v)}" for k, v in values.items())


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
