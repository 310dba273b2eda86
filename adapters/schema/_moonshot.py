"""Moonshot / Kimi ("Moonshot-flavoured JSON Schema"; docs/provider-schema-rules.md §8, and the
Moonshot rule in adapters/schema/RULES.md).

- A `$ref` with sibling keywords is refused ("conflicting keywords found after $ref
  expansion"), so the target is inlined under the node: `required` is the union, `properties`
  merge, every other keyword the node's own value wins (a target constraint the node's value
  loosens is reported as relaxed). A bare `$ref` stays a reference; an unresolvable one would stay
  a bare `$ref` that Moonshot refuses, so the tool is refused.
- References resolve to the root `$defs` only: targets elsewhere (`definitions`, nested `$defs`,
  `#/properties/...`, `#`) are moved there.
- Every node has a `type`; never beside `$ref` (it is in the target); with `anyOf` the type is in
  each member, not on the parent. A node that accepts any value becomes an `anyOf` of every type
  (exact), with a shared "any value" definition for the elements of arrays.
- `allOf` is flattened (Moonshot's own `allOf` handling is not relied on: RULES.md); `oneOf`
  becomes `anyOf`.
- The root is `type: object`; a property literally named `$ref` breaks the validator (refused);
  tuple `items` are reported refused (dropped).
- What else Moonshot's validator (walle, at the level its server requires) refuses is fitted or
  refused, and the keywords it does not honour are reported (`_mfjs_fit`).
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import _mfjs_fit as F
from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._rules import Rules, copy_node, root_object
from xpeval.adapters.schema._steps import drop_inapplicable, inferred_type
from xpeval.adapters.schema._unions import one_of_as_any_of, split_by_type, type_into_members
from xpeval.adapters.schema._view import sibling_keywords
from xpeval.adapters.schema._vocab import SCHEMA_POSITIONS, type_set
from xpeval.adapters.schema._walk import NO_SKIP, Layer, LayerKind, RefAction, RefMode, Refused, Task, View
from xpeval.adapters.schema._wellformed import check_common

_ANY_TYPES = ("string", "number", "boolean", "object", "array", "null")
_ANY_DEF = "AnyValue"


class MoonshotRules(Rules):
    name = "moonshot"
    label = "Moonshot"
    ref_mode = RefMode.DEFS
    refs_must_resolve = True
    flatten_allof = True
    flatten_root_allof = True
    resolve_root_unions = True
    inline_reason = "Moonshot refuses sibling keywords beside $ref"

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> RefAction:
        return RefAction.INLINE if sibling_keywords(layers, i) else RefAction.KEEP

    def top(self, e: Engine) -> Any:
        return {"$ref": "#/$defs/" + P.escape(self._any_def(e))}

    def boolean(self, e: Engine, task: Task, layers: Any) -> Any:
        value = all(layer.node is not False for layer in layers)
        if task.key == "additionalProperties" or not value:
            return value
        return self.top(e)

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        check_common(e, view)
        if task.root:
            root_object(e, view)
        if "$ref" in view.kw:
            return _bare_ref(e, view, task)
        _check_property_names(view)
        F.drop_bad_annotations(e, view)
        F.const_as_enum(e, view)
        if "oneOf" in view.kw:
            one_of_as_any_of(e, view)
        if "prefixItems" in view.kw:
            del view.kw["prefixItems"]
            e.loss(
                view.at("prefixItems"), "prefixItems", "dropped", "Moonshot is reported to refuse tuple items"
            )
        types = type_set(view.kw.get("type"))
        drop_inapplicable(view, types)
        F.check_enum_size(e, view)
        if "anyOf" in view.kw:
            F.report_unsupported(e, view)
            return _union(e, view, task, types)
        if types is None:
            types = _type_from_values(view)
            if types is None:
                # accepts any type: one member per type, each with the node's keywords for it
                return split_by_type(e, view, task, list(_ANY_TYPES))
        split = F.fit_enum(view, types)
        if split is not None:
            return split_by_type(e, view, task, split)
        narrowed = type_set(view.kw.get("type"))
        if narrowed is not None and narrowed != types:
            types = narrowed
            drop_inapplicable(view, types)
        several = _several_types(view, types)
        if several is not None:
            return split_by_type(e, view, task, several)
        F.report_unsupported(e, view)
        out: dict[str, Any] = {}
        copy_node(e, view, task, out)
        self._complete(e, out, types)
        F.declare_required(e, view, task, out, lambda: self.top(e))
        return out

    def finish(self, e: Engine, out: dict[str, Any]) -> None:
        F.check_output(out)

    def _complete(self, e: Engine, out: dict[str, Any], types: frozenset[str]) -> None:
        # what an OpenAI-Chat-compatible validator also wants: objects with properties, arrays
        # with items (here: any value, which is what a missing `items` means)
        if "object" in types and "properties" not in out:
            out["properties"] = {}
        if "array" in types and "items" not in out:
            out["items"] = self.top(e)

    def _any_def(self, e: Engine) -> str:
        name = e.state.get("any_def")
        if name is None:
            schema: dict[str, Any] = {"anyOf": []}
            name = e.extra_def(_ANY_DEF, schema)
            e.state["any_def"] = name
            ref = {"$ref": "#/$defs/" + P.escape(name)}
            for t in _ANY_TYPES:
                member: dict[str, Any] = {"type": t}
                if t == "object":
                    member["properties"] = {}
                if t == "array":
                    member["items"] = ref
                schema["anyOf"].append(member)
        return str(name)


def _bare_ref(e: Engine, view: View, task: Task) -> dict[str, Any]:
    """A reference stays a reference (into the root `$defs`); one with siblings was inlined."""
    if len(view.kw) != 1:  # pragma: no cover - inlined before
        raise Refused(R.PASS_ERROR, f"$ref with siblings left at {view.at('$ref')}")
    return {"$ref": e.ref_out(view.kw["$ref"], task)}


_RESERVED_NAMES = ("required", "additionalProperties", "anyOf", "$defs")
"""Property names Moonshot's validator refuses at `strict` (docs/provider-schema-rules.md §8); a
property cannot be renamed without changing the arguments the tool takes, so the tool is refused."""


def _check_property_names(view: View) -> None:
    props = view.kw.get("properties")
    if not isinstance(props, dict):
        return
    if "$ref" in props:
        raise Refused(
            R.MOONSHOT_REF_PROPERTY,
            f"a property literally named '$ref' at {view.at('properties')} breaks Moonshot's validator "
            "('$ref must be a string')",
        )
    reserved = [name for name in _RESERVED_NAMES if name in props]
    if reserved:
        raise Refused(
            R.MOONSHOT_RESERVED_PROPERTY,
            f"a property named '{reserved[0]}' at {view.at('properties')}: Moonshot's validator "
            "refuses it ('reserved for JSON Schema keywords')",
        )


_MULTI_TYPE_KEEPS = frozenset(("type", "enum", "description", "title"))


def _several_types(view: View, types: frozenset[str]) -> list[str] | None:
    """The types to split a node into when Moonshot (at `strict`) cannot take it as one: a type
    array of several types, without an enum, beside any keyword but `description`/`title`
    (docs/provider-schema-rules.md §8), or one that needs `properties`/`items` added."""
    declared = view.kw.get("type")
    if not isinstance(declared, list) or len(types) < 2 or "enum" in view.kw:
        return None
    if set(view.kw) <= _MULTI_TYPE_KEEPS and not types & {"object", "array"}:
        return None
    return [t for t in dict.fromkeys(declared) if t in types]


def _union(e: Engine, view: View, task: Task, types: frozenset[str] | None) -> dict[str, Any]:
    """With `anyOf` the type belongs in each member, not on the parent."""
    if types is not None:
        type_into_members(e, view, types)
    _assertions_into_members(view, task)
    out: dict[str, Any] = {}
    copy_node(e, view, task, out)
    return out


_STAY = frozenset(("anyOf", "description", "title", "$id", "$defs", "$schema", "$comment", *SCHEMA_POSITIONS))


def _assertions_into_members(view: View, task: Task) -> None:
    """`{required: [a], anyOf: [x, y]}` means `anyOf: [x and required, y and required]`: Moonshot
    refuses a keyword both on the parent and in a branch, a `required` beside no `properties` and an
    `enum` beside no `type`, so such plain keywords move into every member (exact). Subschema
    keywords stay (a conflict left is refused over the output)."""
    kw = view.kw
    if not isinstance(kw.get("anyOf"), list):
        return
    in_members = {
        k for member in kw["anyOf"] for layer in member if isinstance(layer.node, dict) for k in layer.node
    }
    moving = [
        k
        for k in kw
        if k not in _STAY
        and not (task.root and k == "type")
        # walle reads `required` against the node's own `properties`, and wants a `type` beside an
        # `enum` (which an anyOf parent cannot carry)
        and (k in in_members or k == "enum" or (k == "required" and "properties" not in kw))
    ]
    if not moving:
        return
    layers = [Layer({k: kw.pop(k)}, view.origin(k), LayerKind.CONJ, NO_SKIP) for k in moving]
    kw["anyOf"] = [(*member, *layers) for member in kw["anyOf"]]


def _type_from_values(view: View) -> frozenset[str] | None:
    """An untyped `enum`/`const` node gets the types of its values (exact); None when it has none."""
    kw = view.kw
    values = kw["enum"] if "enum" in kw else [kw["const"]] if "const" in kw else None
    inferred = inferred_type(values) if values else None
    if inferred is None:
        return None
    view.kw = {"type": inferred, **kw}
    return type_set(inferred)
