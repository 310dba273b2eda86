"""Gemini `parameters`: the OpenAPI 3.0 `Schema` subset (docs/provider-schema-rules.md §6).

Only the fields of the `Schema` message exist; any other is an unknown proto field and refused.
- No references: every `$ref` is inlined; a recursive schema cannot be written and is refused.
- `type` is one name: a type list becomes `nullable: true` (for null) or an `anyOf` with one
  member per type; `anyOf` members of type null become `nullable: true` on the others.
- `enum` holds strings only (and needs `type: string`); other enums are stated in the
  description. `const` becomes a one-value enum.
- Every node has a type (or `anyOf`); every object has non-empty `properties`, so a free-form
  object (nested, or a property-less one) cannot be written and is refused. A parameterless
  tool keeps `properties: {}` at the root, and the wire omits `parameters` for it (§6).
- `additionalProperties` does not exist: `false` is dropped and reported.
- Unsupported scalar constraints are stated in the description and reported; `exclusiveMinimum`
  on an integer becomes an exact `minimum`.
- Property names start with a letter or underscore, then letters, digits, underscores (≤ 64).

`GeminiOpenAPIRules.shape` runs one step per keyword family, in this order: property names,
`oneOf`, `const`, `enum`, `anyOf` (or the type an untyped node implies), the single type with
its object, array, numeric and string keywords, then the fields the subset does not have.
"""

from __future__ import annotations

import math
import re
from typing import Any

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._rules import Rules, copy_node, root_object
from xpeval.adapters.schema._steps import (
    add_description,
    drop_inapplicable,
    drop_keywords,
    families_used,
    format_constraints,
    inferred_type,
    narrow_to_type,
)
from xpeval.adapters.schema._unions import is_null_member, one_of_as_any_of, split_by_type, type_into_members
from xpeval.adapters.schema._vocab import TYPE_ORDER, TYPED_KEYWORDS, type_set
from xpeval.adapters.schema._walk import Layer, Layers, RefAction, RefMode, Refused, Task, View
from xpeval.adapters.schema._wellformed import check_common

_LABEL = "Gemini parameters (OpenAPI subset)"
_ALLOWED = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "minimum",
        "maximum",
    }
)
_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}
_LEAF_KEYWORDS = {
    t: frozenset({"type", "description", "title", "default", "example"})
    | (TYPED_KEYWORDS[t] & _ALLOWED) - {"format"}
    for t in ("string", "integer", "number")
}
_LEAF_KEYWORDS["boolean"] = frozenset({"type", "description", "title", "default", "example"})
_PROPERTY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_EXCLUSIVE_BOUNDS = (("exclusiveMinimum", "minimum", 1), ("exclusiveMaximum", "maximum", -1))


class GeminiOpenAPIRules(Rules):
    name = "gemini-openapi"
    label = _LABEL
    ref_mode = RefMode.INLINE
    refs_must_resolve = True
    flatten_allof = True
    flatten_root_allof = True
    resolve_root_unions = True
    inline_reason = "Gemini parameters has no references"

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> RefAction:
        return RefAction.INLINE

    def on_cycle(self, e: Engine, task: Task, layers: list[Layer], i: int, ref: str) -> bool:
        raise Refused(
            R.GEMINI_RECURSION,
            f"the schema is recursive ($ref {ref!r} at {P.to_str(layers[i].ptr) or '/'} refers back to "
            f"itself); {self.label} has no references, so it cannot be written",
        )

    def top(self, e: Engine) -> Any | None:
        return None

    def boolean(self, e: Engine, task: Task, layers: Layers) -> Any:
        raise Refused(
            R.GEMINI_TYPE,
            f"{self.label} cannot express the boolean schema at {P.to_str(layers[0].ptr) or '/'}",
        )

    def make_nullable(self, e: Engine, task: Task, out: Any) -> Any:
        # a union got the flag on its members already (see `_emit`)
        if isinstance(out, dict) and "anyOf" not in out:
            out["nullable"] = True
        return out

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        check_common(e, view)
        kw = view.kw
        t = kw.get("type")
        leaf_ok = _LEAF_KEYWORDS.get(t) if type(t) is str else None
        if leaf_ok is not None and kw.keys() <= leaf_ok and not task.nullable:
            # the common case: a scalar whose every keyword the subset has as it is
            return dict(kw)
        if task.root:
            root_object(e, view)
        # one step per keyword family, each only where the node has the family's keyword
        if "properties" in view.kw:
            _check_property_names(view)
        if "oneOf" in view.kw:
            one_of_as_any_of(e, view)
        node = _Node(view, task)
        if view.kw.get("nullable") is True:
            _nullable_keyword(e, view, task)
        if "const" in view.kw:
            _const(e, node)
        node.types = type_set(view.kw.get("type"))
        if "enum" in view.kw:
            _enum(e, node)
        if "anyOf" in view.kw:
            _any_of(e, node)
        elif node.types is None:
            _untyped(e, node)
        if node.types is not None:
            split = _single_type(e, node)
            if split is not None:
                return split
        _drop_unsupported(e, node)
        return _emit(e, node)


class _Node:
    """One node being shaped: what the steps found so far besides its keywords."""

    __slots__ = ("notes", "nullable", "task", "types", "view")

    def __init__(self, view: View, task: Task) -> None:
        self.view = view
        self.task = task
        self.notes: dict[str, Any] = {}
        """Constraints the subset cannot hold, stated in the description."""
        self.nullable = view.kw.get("nullable") is True or task.nullable
        self.types: frozenset[str] | None = None


# --------------------------------------------------------------------------- object keywords


def _check_property_names(view: View) -> None:
    props = view.kw.get("properties")
    if not isinstance(props, dict):
        return
    for name in props:
        if not _PROPERTY_NAME.fullmatch(name):
            raise Refused(
                R.GEMINI_PROPERTY_NAME,
                f"property name {name!r} at {view.at('properties')} is not allowed in {_LABEL} "
                "(a letter or underscore, then letters, digits or underscores, at most 64)",
            )


def _object(e: Engine, view: View, task: Task) -> None:
    kw = view.kw
    extra = kw.pop("additionalProperties", None)
    if extra is not None and not all(layer.node is True or layer.node == {} for layer in extra):
        e.loss(
            view.at("additionalProperties"),
            "additionalProperties",
            "dropped",
            f"{_LABEL} has no additionalProperties: undeclared keys are no longer refused or typed",
        )
    if not kw.get("properties"):
        _no_properties(e, view, task, extra)


def _no_properties(e: Engine, view: View, task: Task, extra: Layers | None) -> None:
    """Only the root may be an object without properties: the tool then takes no argument."""
    if not task.root:
        raise Refused(
            R.GEMINI_FREE_FORM,
            f"the object at {P.to_str(view.ptr) or '/'} declares no properties (a free-form "
            f"object); {_LABEL} needs non-empty properties on every object (§6)",
        )
    closed = extra is not None and all(layer.node is False for layer in extra)
    # a root that declares its (empty) properties and leaves extra keys unsaid is a tool with no
    # arguments: sending it without parameters loses nothing
    no_arguments = extra is None and isinstance(view.kw.get("properties"), dict)
    if not closed:
        e.closed.append(e.out_pointer(task.out_ptr))
    if not closed and not no_arguments:
        e.loss(
            view.at("properties"),
            "properties",
            "narrowed",
            "the root object declares no properties but accepts any keys; "
            f"{_LABEL} cannot express a free-form object, so the tool is declared "
            "without parameters and the model can send no argument",
        )
    view.kw["properties"] = {}


# --------------------------------------------------------------------------- array keywords


def _array(view: View) -> None:
    if "items" not in view.kw:
        raise Refused(
            R.GEMINI_ARRAY_ITEMS,
            f"the array at {P.to_str(view.ptr) or '/'} has no items schema; {_LABEL} needs the "
            "element type (an array of any value cannot be written)",
        )


# --------------------------------------------------------------------------- const and enum


def _const(e: Engine, node: _Node) -> None:
    kw = node.view.kw
    value = kw.pop("const")
    if isinstance(value, str) or value is None:
        kw["enum"] = [value] if "enum" not in kw or value in kw["enum"] else []
        e.loss(node.view.at("const"), "const", "renamed", "sent as a one-value enum (exact)")
        return
    node.notes["const"] = value
    e.loss(node.view.at("const"), "const", "moved-to-description", f"{_LABEL} has no const")
    if "type" not in kw:
        kw["type"] = inferred_type([value])


def _enum(e: Engine, node: _Node) -> None:
    view = node.view
    kw = view.kw
    values = kw["enum"]
    if any(v is None for v in values):
        node.nullable = True
        values = [v for v in values if v is not None]
        e.loss(view.at("enum"), "enum", "renamed", "null member sent as nullable: true (exact)")
    if values and all(isinstance(v, str) for v in values) and (node.types is None or "string" in node.types):
        kw["enum"] = values
        node.types = frozenset(("string",))
    elif not values:
        raise Refused(R.GEMINI_ENUM, f"the enum at {view.at('enum')} admits no value {_LABEL} can express")
    else:
        node.notes["enum"] = kw.pop("enum")
        e.loss(view.at("enum"), "enum", "moved-to-description", f"{_LABEL} enums hold strings only")
        if node.types is None:
            node.types = type_set(inferred_type(values))


# --------------------------------------------------------------------------- combinators and type


def _any_of(e: Engine, node: _Node) -> None:
    """Null members become `nullable: true`; the parent's type moves into the members."""
    view = node.view
    kw = view.kw
    members = kw["anyOf"]
    kept = [m for m in members if not is_null_member(m)]
    if len(kept) < len(members):
        node.nullable = True
        kw["anyOf"] = kept
        if not kept:
            raise Refused(R.GEMINI_ONLY_NULL, f"the schema at {P.to_str(view.ptr) or '/'} admits only null")
    if node.types is not None:
        kw["type"] = sorted(node.types)
        type_into_members(e, view, node.types)
        if "enum" not in kw:
            node.types = None
        # An enum stays on the parent, and Gemini wants `type: string` beside it
        # (docs/provider-schema-rules.md §6): the parent keeps its type too.


def _untyped(e: Engine, node: _Node) -> None:
    """An untyped node: sent with the one type its keywords talk about, or refused."""
    view = node.view
    families = families_used(view.kw)
    if len(families) != 1:
        raise Refused(
            R.GEMINI_TYPE,
            f"the schema at {P.to_str(view.ptr) or '/'} accepts any value; {_LABEL} needs a type on "
            "every node",
        )
    family = families.pop()
    node.types = frozenset((family,))
    narrow_to_type(e, view, node.task, family)


def _single_type(e: Engine, node: _Node) -> dict[str, Any] | None:
    """The node's type as one name (null as `nullable`); several types split the node into an
    `anyOf` (returned: the node is done). Then the keywords of that type."""
    view = node.view
    types = node.types
    assert types is not None
    if "null" in types:
        node.nullable = True
        types = types - {"null"}
        if not types:
            raise Refused(R.GEMINI_ONLY_NULL, f"the schema at {P.to_str(view.ptr) or '/'} admits only null")
    if len(types) > 1:
        ordered = [t for t in TYPE_ORDER if t in types]
        return split_by_type(e, view, node.task, ordered, nullable=node.nullable)
    (single,) = types
    view.kw["type"] = single
    drop_inapplicable(view, types)
    if single == "object":
        _object(e, view, node.task)
    if single == "array":
        _array(view)
    _bounds(e, view, single, node.notes)
    return None


# --------------------------------------------------------------------------- numeric and string keywords


def _bounds(e: Engine, view: View, single: str, notes: dict[str, Any]) -> None:
    for exclusive, inclusive, step in _EXCLUSIVE_BOUNDS:
        if exclusive in view.kw:
            _exclusive_bound(e, view, single, notes, exclusive, inclusive, step)
    fmt = view.kw.get("format")
    if fmt is not None and fmt not in _FORMATS.get(single, ()):
        notes["format"] = view.kw.pop("format")
        e.loss(view.at("format"), "format", "moved-to-description", f"{_LABEL} does not support this format")


def _exclusive_bound(
    e: Engine, view: View, single: str, notes: dict[str, Any], exclusive: str, inclusive: str, step: int
) -> None:
    """The subset has no exclusive bounds: exact as an inclusive one on integers, else a note."""
    kw = view.kw
    value = kw.pop(exclusive)
    if not (single == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool)):
        notes[exclusive] = value
        e.loss(view.at(exclusive), exclusive, "moved-to-description", f"{_LABEL} has no {exclusive}")
        return
    # for integers `> x` is exactly `>= floor(x) + 1` (and `< x` is `<= ceil(x) - 1`)
    bound: float = math.floor(value) + 1 if step > 0 else math.ceil(value) - 1
    current = kw.get(inclusive)
    if isinstance(current, (int, float)) and not isinstance(current, bool):
        bound = max(bound, current) if step > 0 else min(bound, current)
    kw[inclusive] = bound
    e.loss(view.at(exclusive), exclusive, "renamed", f"sent as {inclusive}: {bound} (exact for integers)")


# --------------------------------------------------------------------------- the rest


def _nullable_keyword(e: Engine, view: View, task: Task) -> None:
    """An input's own `nullable: true` is kept, and the subset reads it: null is admitted. The
    original read as JSON Schema (no `nullable` keyword there) did not admit it unless its type
    says so."""
    types = type_set(view.kw.get("type"))
    if task.nullable or (types is not None and "null" in types):
        return
    e.loss(
        view.at("nullable"),
        "nullable",
        "relaxed",
        f"kept, and {_LABEL} reads it: null is admitted, which the schema read as JSON Schema (where "
        "nullable is no keyword) does not admit",
    )


def _drop_unsupported(e: Engine, node: _Node) -> None:
    kw = node.view.kw
    if "nullable" in kw:
        del kw["nullable"]
    unsupported = [k for k in kw if k not in _ALLOWED]
    if unsupported:
        drop_keywords(
            e, node.view, unsupported, reason=f"{_LABEL} has no such field", to_description=node.notes
        )


def _emit(e: Engine, node: _Node) -> dict[str, Any]:
    """The output node: `type` first, then the keywords in their order; a nullable union says
    so on each member (the subset reads `nullable` there)."""
    view, task = node.view, node.task
    out: dict[str, Any] = {}
    if "type" in view.kw:
        view.kw = {"type": view.kw.pop("type"), **view.kw}
    if node.nullable and "anyOf" in view.kw:
        members = view.kw.pop("anyOf")
        copy_node(e, view, task, out)
        slots: list[Any] = [None] * len(members)
        out["anyOf"] = slots
        base = (task.out_ptr, "anyOf")
        for j, member in enumerate(members):
            e.push(member, task, slots, j, (base, j), nullable=True)
    else:
        copy_node(e, view, task, out)
        if node.nullable:
            out["nullable"] = True
    if node.notes:
        add_description(out, format_constraints(node.notes))
    return out
