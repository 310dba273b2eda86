"""What a dialect decides, and the steps every dialect takes at the root.

A dialect is a `Rules` subclass: how it treats references (a `RefMode`: keep them, move them
to root `$defs`, or inline them), whether it flattens `allOf`, and `shape`, which turns the
merged view of one node into the output node. The walker (`_engine`) does everything else;
the shaping steps several dialects share, one per keyword family, are in `_steps` and `_unions`.
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._vocab import LIST_SCHEMA, MAP_SCHEMA, SINGLE_SCHEMA, type_set
from xpeval.adapters.schema._walk import Layer, LayerKind, Layers, RefAction, RefMode, Refused, Task, View
from xpeval.adapters.schema._wellformed import check_common


class Rules:
    """The default dialect: keep everything, references as they are."""

    name = "json-schema"
    label = "this provider"
    ref_mode: RefMode = RefMode.KEEP
    refs_must_resolve = False
    flatten_allof = False
    flatten_root_allof = False
    resolve_root_unions = False
    inline_reason = "the root must be an object schema, not a reference"

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> RefAction:
        return RefAction.KEEP

    def expand_root_layer(self, e: Engine, layers: list[Layer], i: int) -> None:
        """Root-only rewrites at the layer level (a root union the provider refuses)."""
        if not self.resolve_root_unions:
            return
        for key in ("anyOf", "oneOf"):
            if key in layers[i].node and key not in layers[i].skip:
                resolve_root_union(e, layers, i, key)

    def on_cycle(self, e: Engine, task: Task, layers: list[Layer], i: int, ref: str) -> bool:
        """A `$ref` to inline points back into its own inlining. True when the node was placed;
        False keeps the `$ref` on the node for `shape` to handle."""
        e.bare_ref_on_cycle(task, layers, i, ref)
        return True

    def top(self, e: Engine) -> Any | None:
        """The schema for "any value", used to close a node; None when the dialect has none."""
        return {}

    def boolean(self, e: Engine, task: Task, layers: Layers) -> Any:
        """A boolean schema (`true` accepts anything, `false` nothing), kept as it is."""
        return all(layer.node is not False for layer in layers)

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        check_common(e, view)
        if task.root:
            root_object(e, view)
        out: dict[str, Any] = {}
        copy_node(e, view, task, out)
        return out

    def make_nullable(self, e: Engine, task: Task, out: Any) -> Any:
        return out

    def finish(self, e: Engine, out: dict[str, Any]) -> None:
        """Checks over the whole output (size limits)."""


# --------------------------------------------------------------------------- copying


def copy_node(
    e: Engine,
    view: View,
    task: Task,
    out: dict[str, Any],
    drop: Any = (),
    only: str | None = None,
    out_ptr: Any = None,
) -> None:
    """Copy the view's keywords into `out` in their order, pushing its subschemas as tasks
    (`only`: just that keyword; `out_ptr`: where `out` sits when it is not the task's node)."""
    if out_ptr is None:
        out_ptr = task.out_ptr
    pairs = view.kw.items() if only is None else ((only, view.kw[only]),)
    for key, value in pairs:
        if key in drop:
            continue
        if key in SINGLE_SCHEMA:
            out[key] = None
            e.push(value, task, out, key, (out_ptr, key))
        elif key in MAP_SCHEMA:
            slot: dict[str, Any] = {}
            out[key] = slot
            base = (out_ptr, key)
            for name, layers in value.items():
                slot[name] = None
                e.push(layers, task, slot, name, (base, name))
        elif key in LIST_SCHEMA:
            items: list[Any] = [None] * len(value)
            out[key] = items
            base = (out_ptr, key)
            for j, layers in enumerate(value):
                e.push(layers, task, items, j, (base, j))
        else:
            out[key] = value


# --------------------------------------------------------------------------- root


def root_object(e: Engine, view: View) -> None:
    """Tool arguments are a JSON object: the root says `type: object` (added when missing, which
    costs nothing because arguments are always objects); a root that cannot be an object is
    refused."""
    kw = view.kw
    t = kw.get("type")
    if t is None:
        view.kw = {"type": "object", **kw}
        return
    types = type_set(t)
    if types is None or "object" not in types:
        raise Refused(
            R.ROOT_NOT_OBJECT, f"the root schema must describe an object (type 'object'), got type {t!r}"
        )
    if t != "object":
        kw["type"] = "object"


def resolve_root_union(e: Engine, layers: list[Layer], i: int, key: str) -> None:
    """A root `anyOf`/`oneOf` where the provider refuses one. Members that cannot be objects are
    irrelevant for tool arguments; one remaining member is merged into the root (exact); more
    cannot be expressed and are refused."""
    layer = layers[i]
    members = layer.node[key]
    if not isinstance(members, list) or not members:
        raise Refused(
            R.NOT_JSON_SCHEMA,
            f"{key} at {P.join(P.to_str(layer.ptr), key)} must be a non-empty array of schemas",
        )
    base = P.child(layer.ptr, key)
    objects = [(j, m) for j, m in enumerate(members) if _may_be_object(e, m)]
    if not objects:
        raise Refused(
            R.ROOT_NOT_OBJECT,
            f"no member of the root {key} admits an object, so the tool could never receive arguments",
        )
    if len(objects) > 1:
        raise Refused(
            R.ROOT_UNION,
            f"the root schema is a union ({key} of {len(objects)} object shapes) and {e.rules.label} refuses "
            f"{key} at the root; it cannot be expressed without losing the union",
        )
    j, member = objects[0]
    layers[i] = layer._replace(skip=layer.skip | {key})
    layers.append(Layer(member, (base, j), LayerKind.CONJ, e.child_skip))


def _may_be_object(e: Engine, member: Any) -> bool:
    seen = 0
    while isinstance(member, dict) and "$ref" in member and "type" not in member and seen < 8:
        target = e.resolve(member["$ref"]) if isinstance(member["$ref"], str) else None
        if target is None:
            return True
        member = target[0]
        seen += 1
    if member is False:
        return False
    if isinstance(member, dict):
        types = type_set(member.get("type"))
        return types is None or "object" in types
    return True
