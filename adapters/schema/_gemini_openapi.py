"""Gemini `parameters`: the OpenAPI 3.0 `Schema` subset (rules doc §6).

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
"""

from __future__ import annotations

import math
import re
from typing import Any

from adapters.schema import _pointer as P
from adapters.schema._engine import (
    ACT_INLINE,
    INLINE,
    NULLABLE,
    ROOT,
    Engine,
    Layer,
    Layers,
    Refused,
    Task,
    View,
)
from adapters.schema._rules import (
    Rules,
    add_description,
    copy_node,
    drop_inapplicable,
    drop_keywords,
    families_used,
    format_constraints,
    inferred_type,
    is_null_member,
    narrow_to_type,
    one_of_as_any_of,
    root_object,
    split_by_type,
    type_into_members,
)
from adapters.schema._vocab import TYPE_ORDER, TYPED_KEYWORDS, type_set

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


class GeminiOpenAPIRules(Rules):
    name = "gemini-openapi"
    label = "Gemini parameters (OpenAPI subset)"
    ref_mode = INLINE
    refs_must_resolve = True
    flatten_allof = True
    flatten_root_allof = True
    resolve_root_unions = True
    inline_reason = "Gemini parameters has no references"

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> int:
        return ACT_INLINE

    def on_cycle(self, e: Engine, task: Task, layers: list[Layer], i: int, ref: str) -> bool:
        raise Refused(
            f"the schema is recursive ($ref {ref!r} at {P.to_str(layers[i].ptr) or '/'} refers back to "
            "itself); "
            f"{self.label} has no references, so it cannot be written"
        )

    def top(self, e: Engine) -> Any | None:
        return None

    def boolean(self, e: Engine, task: Task, layers: Layers) -> Any:
        raise Refused(f"{self.label} cannot express the boolean schema at {P.to_str(layers[0].ptr) or '/'}")

    def make_nullable(self, e: Engine, task: Task, out: Any) -> Any:
        # a union got the flag on its members already (see `shape`)
        if isinstance(out, dict) and "anyOf" not in out:
            out["nullable"] = True
        return out

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        e.check_common(view)
        kw = view.kw
        t = kw.get("type")
        leaf_ok = _LEAF_KEYWORDS.get(t) if type(t) is str else None
        if leaf_ok is not None and kw.keys() <= leaf_ok and not task.flags & NULLABLE:
            # the common case: a scalar whose every keyword the subset has as it is
            return dict(kw)
        if task.flags & ROOT:
            root_object(e, view)
            kw = view.kw
        props = kw.get("properties")
        if isinstance(props, dict):
            for name in props:
                if not _PROPERTY_NAME.fullmatch(name):
                    raise Refused(
                        f"property name {name!r} at {view.at('properties')} is not allowed in {self.label} "
                        "(a letter or underscore, then letters, digits or underscores, at most 64)"
                    )
        if "oneOf" in kw:
            one_of_as_any_of(e, view)
        notes: dict[str, Any] = {}
        nullable = kw.get("nullable") is True or bool(task.flags & NULLABLE)
        if "const" in kw:
            value = kw.pop("const")
            if isinstance(value, str) or value is None:
                kw["enum"] = [value] if "enum" not in kw or value in kw["enum"] else []
                e.loss(view.at("const"), "const", "renamed", "sent as a one-value enum (exact)")
            else:
                notes["const"] = value
                e.loss(view.at("const"), "const", "moved-to-description", f"{self.label} has no const")
                if "type" not in kw:
                    kw["type"] = inferred_type([value])
        types = type_set(kw.get("type"))
        if "enum" in kw:
            values = kw["enum"]
            if any(v is None for v in values):
                nullable = True
                values = [v for v in values if v is not None]
                e.loss(view.at("enum"), "enum", "renamed", "null member sent as nullable: true (exact)")
            if values and all(isinstance(v, str) for v in values) and (types is None or "string" in types):
                kw["enum"] = values
                types = frozenset(("string",))
            elif not values:
                raise Refused(f"the enum at {view.at('enum')} admits no value {self.label} can express")
            else:
                notes["enum"] = kw.pop("enum")
                e.loss(
                    view.at("enum"), "enum", "moved-to-description", f"{self.label} enums hold strings only"
                )
                if types is None:
                    types = type_set(inferred_type(values))
        if "anyOf" in kw:
            members = kw["anyOf"]
            kept = [m for m in members if not is_null_member(m)]
            if len(kept) < len(members):
                nullable = True
                kw["anyOf"] = kept
                if not kept:
                    raise Refused(f"the schema at {P.to_str(view.ptr) or '/'} admits only null")
            if types is not None:
                kw["type"] = sorted(types)
                type_into_members(e, view, types)
                types = None
        elif types is None:
            families = families_used(kw)
            if len(families) != 1:
                raise Refused(
                    f"the schema at {P.to_str(view.ptr) or '/'} accepts any value; {self.label} needs a "
                    "type on "
                    "every node"
                )
            family = families.pop()
            types = frozenset((family,))
            narrow_to_type(e, view, task, family)
        if types is not None:
            if "null" in types:
                nullable = True
                types = types - {"null"}
                if not types:
                    raise Refused(f"the schema at {P.to_str(view.ptr) or '/'} admits only null")
            if len(types) > 1:
                return split_by_type(
                    e, view, task, [t for t in TYPE_ORDER if t in types], NULLABLE if nullable else 0
                )
            (single,) = types
            kw["type"] = single
            drop_inapplicable(view, types)
            self._object_and_array(e, view, task, single)
            self._bounds(e, view, single, notes)
        if "nullable" in kw:
            del kw["nullable"]
        unsupported = [k for k in kw if k not in _ALLOWED]
        if unsupported:
            drop_keywords(
                e, view, unsupported, reason=f"{self.label} has no such field", to_description=notes
            )
        out: dict[str, Any] = {}
        if "type" in view.kw:
            view.kw = {"type": view.kw.pop("type"), **view.kw}
        if nullable and "anyOf" in view.kw:
            members_layers = view.kw.pop("anyOf")
            copy_node(e, view, task, out)
            slots: list[Any] = [None] * len(members_layers)
            out["anyOf"] = slots
            base = (task.out_ptr, "anyOf")
            for j, member in enumerate(members_layers):
                e.push(member, task, slots, j, (base, j), NULLABLE)
        else:
            copy_node(e, view, task, out)
            if nullable:
                out["nullable"] = True
        if notes:
            add_description(out, format_constraints(notes))
        return out

    def _object_and_array(self, e: Engine, view: View, task: Task, single: str) -> None:
        kw = view.kw
        if single == "object":
            extra = kw.pop("additionalProperties", None)
            if extra is not None and not all(layer.node is True or layer.node == {} for layer in extra):
                e.loss(
                    view.at("additionalProperties"),
                    "additionalProperties",
                    "dropped",
                    f"{self.label} has no additionalProperties: undeclared keys are no longer refused or "
                    "typed",
                )
            if not kw.get("properties"):
                if not task.flags & ROOT:
                    raise Refused(
                        f"the object at {P.to_str(view.ptr) or '/'} declares no properties (a free-form "
                        f"object); {self.label} needs non-empty properties on every object (§6)"
                    )
                closed = extra is not None and all(layer.node is False for layer in extra)
                if not closed:
                    e.closed.append(e.out_pointer(task.out_ptr))
                    e.loss(
                        view.at("properties"),
                        "properties",
                        "narrowed",
                        "the root object declares no properties but accepts any keys; "
                        f"{self.label} cannot express a free-form object, so the tool is declared "
                        "without parameters and the model can send no argument",
                    )
                kw["properties"] = {}
        if single == "array" and "items" not in kw:
            raise Refused(
                f"the array at {P.to_str(view.ptr) or '/'} has no items schema; {self.label} needs the "
                "element type (an array of any value cannot be written)"
            )

    def _bounds(self, e: Engine, view: View, single: str, notes: dict[str, Any]) -> None:
        kw = view.kw
        for exclusive, inclusive, step in (
            ("exclusiveMinimum", "minimum", 1),
            ("exclusiveMaximum", "maximum", -1),
        ):
            if exclusive not in kw:
                continue
            value = kw.pop(exclusive)
            if single == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
                # for integers `> x` is exactly `>= floor(x) + 1` (and `< x` is `<= ceil(x) - 1`)
                bound: float = math.floor(value) + 1 if step > 0 else math.ceil(value) - 1
                current = kw.get(inclusive)
                if isinstance(current, (int, float)) and not isinstance(current, bool):
                    bound = max(bound, current) if step > 0 else min(bound, current)
                kw[inclusive] = bound
                e.loss(
                    view.at(exclusive),
                    exclusive,
                    "renamed",
                    f"sent as {inclusive}: {bound} (exact for integers)",
                )
            else:
                notes[exclusive] = value
                e.loss(
                    view.at(exclusive), exclusive, "moved-to-description", f"{self.label} has no {exclusive}"
                )
        fmt = kw.get("format")
        if fmt is not None and fmt not in _FORMATS.get(single, ()):
            notes["format"] = kw.pop("format")
            e.loss(
                view.at("format"),
                "format",
                "moved-to-description",
                f"{self.label} does not support this format",
            )
