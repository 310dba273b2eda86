"""Moonshot / Kimi ("Moonshot-flavoured JSON Schema"; rules doc §8, seed 002's decision).

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
- `allOf` is flattened (seed 002 declined to rely on Moonshot's allOf); `oneOf` becomes `anyOf`.
- The root is `type: object`; a property literally named `$ref` breaks the validator (refused);
  tuple `items` are reported refused (dropped).
"""

from __future__ import annotations

from typing import Any

from adapters.schema import _pointer as P
from adapters.schema._engine import Engine
from adapters.schema._rules import Rules, copy_node, root_object
from adapters.schema._steps import drop_inapplicable, inferred_type
from adapters.schema._unions import one_of_as_any_of, split_by_type, type_into_members
from adapters.schema._view import sibling_keywords
from adapters.schema._vocab import type_set
from adapters.schema._walk import Layer, RefAction, RefMode, Refused, Task, View
from adapters.schema._wellformed import check_common

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
        kw = view.kw
        if "$ref" in kw:
            if len(kw) == 1:
                return {"$ref": e.ref_out(kw["$ref"], task)}
            raise Refused(
                f"$ref with siblings left at {view.at('$ref')}"
            )  # pragma: no cover - inlined before
        props = kw.get("properties")
        if isinstance(props, dict) and "$ref" in props:
            raise Refused(
                f"a property literally named '$ref' at {view.at('properties')} breaks Moonshot's validator "
                "('$ref must be a string')"
            )
        if "oneOf" in kw:
            one_of_as_any_of(e, view)
        if "prefixItems" in kw:
            del kw["prefixItems"]
            e.loss(
                view.at("prefixItems"), "prefixItems", "dropped", "Moonshot is reported to refuse tuple items"
            )
        types = type_set(kw.get("type"))
        drop_inapplicable(view, types)
        if "anyOf" in kw:
            if types is not None:
                type_into_members(e, view, types)
            out: dict[str, Any] = {}
            copy_node(e, view, task, out)
            return out
        if types is None:
            values = kw["enum"] if "enum" in kw else [kw["const"]] if "const" in kw else None
            inferred = inferred_type(values) if values else None
            if inferred is None:
                # accepts any type: one member per type, each with the node's keywords for it
                return split_by_type(e, view, task, list(_ANY_TYPES))
            view.kw = kw = {"type": inferred, **kw}
            types = type_set(inferred)
        out = {}
        copy_node(e, view, task, out)
        assert types is not None
        self._complete(e, out, types)
        return out

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
