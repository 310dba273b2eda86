"""What a dialect decides, and the node-shaping steps several dialects share.

A dialect is a `Rules` subclass: how it treats references (keep them, move them to root
`$defs`, or inline them), whether it flattens `allOf`, and `shape`, which turns the merged view
of one node into the output node. The walker (`_engine`) does everything else.
"""

from __future__ import annotations

from typing import Any

from adapters.schema import _pointer as P
from adapters.schema._engine import (
    ACT_KEEP,
    CONJ,
    KEEP,
    MEMBER,
    NO_SKIP,
    ROOT,
    Engine,
    Layer,
    Layers,
    Refused,
    Task,
    View,
)
from adapters.schema._values import canonical
from adapters.schema._vocab import (
    ALL_TYPED_KEYWORDS,
    LIST_SCHEMA,
    MAP_SCHEMA,
    SCHEMA_POSITIONS,
    SINGLE_SCHEMA,
    TYPE_ORDER,
    TYPED_KEYWORDS,
    admits,
    is_assertion,
    json_type_of,
    type_set,
)


class Rules:
    """The default dialect: keep everything, references as they are."""

    name = "json-schema"
    label = "this provider"
    ref_mode = KEEP
    refs_must_resolve = False
    flatten_allof = False
    flatten_root_allof = False
    resolve_root_unions = False
    inline_reason = "the root must be an object schema, not a reference"

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> int:
        return ACT_KEEP

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
        e.check_common(view)
        if task.flags & ROOT:
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
        raise Refused(f"the root schema must describe an object (type 'object'), got type {t!r}")
    if t != "object":
        kw["type"] = "object"


def resolve_root_union(e: Engine, layers: list[Layer], i: int, key: str) -> None:
    """A root `anyOf`/`oneOf` where the provider refuses one. Members that cannot be objects are
    irrelevant for tool arguments; one remaining member is merged into the root (exact); more
    cannot be expressed and are refused."""
    layer = layers[i]
    members = layer.node[key]
    if not isinstance(members, list) or not members:
        raise Refused(f"{key} at {P.join(P.to_str(layer.ptr), key)} must be a non-empty array of schemas")
    base = P.child(layer.ptr, key)
    objects = [(j, m) for j, m in enumerate(members) if _may_be_object(e, m)]
    if not objects:
        raise Refused(
            f"no member of the root {key} admits an object, so the tool could never receive arguments"
        )
    if len(objects) > 1:
        raise Refused(
            f"the root schema is a union ({key} of {len(objects)} object shapes) and {e.rules.label} refuses "
            f"{key} at the root; it cannot be expressed without losing the union"
        )
    j, member = objects[0]
    layers[i] = layer._replace(skip=layer.skip | {key})
    layers.append(Layer(member, (base, j), CONJ, e.child_skip))


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


# --------------------------------------------------------------------------- unions


def one_of_as_any_of(e: Engine, view: View) -> None:
    """`oneOf` -> `anyOf`. Exact when the members cannot overlap (different types, or a
    discriminator property with different constant values); otherwise "exactly one" became
    "at least one", which is reported as relaxed."""
    kw = view.kw
    members = kw.pop("oneOf")
    if "anyOf" in kw:
        # both present: the oneOf becomes one more anyOf would change meaning; keep both via
        # distribution is not possible here, so the oneOf is dropped with a loss
        e.loss(view.at("oneOf"), "oneOf", "dropped", "oneOf beside anyOf cannot be expressed: oneOf dropped")
        return
    kw["anyOf"] = members
    if _disjoint(e, members):
        e.loss(view.at("oneOf"), "oneOf", "renamed", "sent as anyOf (exact: the members cannot overlap)")
    else:
        e.loss(
            view.at("oneOf"),
            "oneOf",
            "relaxed",
            "oneOf sent as anyOf: a value matching several members is no longer refused",
        )


def _disjoint(e: Engine, members: list[Layers]) -> bool:
    nodes = []
    for layers in members:
        if len(layers) != 1:
            return False
        node = layers[0].node
        for _ in range(8):
            if isinstance(node, dict) and set(node) == {"$ref"} and isinstance(node["$ref"], str):
                target = e.resolve(node["$ref"])
                if target is None:
                    return False
                node = target[0]
        if not isinstance(node, dict):
            return False
        nodes.append(node)
    types = [type_set(n.get("type")) for n in nodes]
    if all(t is not None for t in types):
        seen: set[str] = set()
        overlap = False
        for t in types:
            assert t is not None
            expanded = set(t) | ({"integer"} if "number" in t else set())
            if expanded & seen:
                overlap = True
                break
            seen |= expanded
        if not overlap:
            return True
    # a discriminator: one required property whose const/enum values differ between members
    shared = None
    for n in nodes:
        req = n.get("required")
        keys = set(req) if isinstance(req, list) else set()
        shared = keys if shared is None else shared & keys
    for prop in sorted(shared or ()):
        values: set[str] = set()
        ok = True
        for n in nodes:
            sub = (n.get("properties") or {}).get(prop)
            if not isinstance(sub, dict):
                ok = False
                break
            options = [sub["const"]] if "const" in sub else sub.get("enum")
            if not isinstance(options, list):
                ok = False
                break
            keys_ = {canonical(v) for v in options}
            if keys_ & values:
                ok = False
                break
            values |= keys_
        if ok:
            return True
    return False


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


def families_used(kw: dict[str, Any]) -> set[str]:
    """The instance types the node's type-specific keywords talk about."""
    used = set()
    for family, keywords in TYPED_KEYWORDS.items():
        if family != "integer" and any(k in kw for k in keywords):
            used.add(family)
    return used


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
    for key in ("anyOf", "oneOf"):
        if key in out:
            return any(accepts_null(m) for m in out[key]) if key == "anyOf" else False
    return types is not None or "enum" in out


def add_description(out: dict[str, Any], note: str) -> None:
    """Append a note to a node's description (the model still reads what the validator drops)."""
    current = out.get("description")
    out["description"] = f"{current} ({note})" if isinstance(current, str) and current else note


def format_constraints(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {_json(v)}" for k, v in values.items())


def _json(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


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


def type_into_members(e: Engine, view: View, types: frozenset[str]) -> None:
    """`{type: T, anyOf: [a, b]}` means `anyOf: [T and a, T and b]`: the type moves into each
    member that does not already say it (exact)."""
    kw = view.kw
    t = kw.pop("type")
    layer = Layer({"type": t}, view.origin("type"), CONJ, NO_SKIP)
    members = []
    for member in kw["anyOf"]:
        member_types = member_types_of(e, member)
        if member_types is not None and all(admits(types, m) for m in member_types):
            members.append(member)
        else:
            members.append((*member, layer))
    kw["anyOf"] = members


def member_types_of(e: Engine, member: Layers) -> frozenset[str] | None:
    """The `type` of a union member, following a bare `$ref` chain (None when unknown)."""
    node = member[0].node
    for _ in range(8):
        if isinstance(node, dict) and set(node) == {"$ref"} and isinstance(node["$ref"], str):
            target = e.resolve(node["$ref"])
            if target is None:
                return None
            node = target[0]
    if not isinstance(node, dict) or len(member) != 1:
        return None
    return type_set(node.get("type"))


def split_by_type(
    e: Engine, view: View, task: Task, types: list[str], member_flags: int = 0
) -> dict[str, Any]:
    """A node of several types becomes `anyOf` with one member per type: each member is the
    node itself and `type: t`, walked like any node (so the dialect's rules apply to it), without
    the annotations, which stay on the parent. Exact."""
    out: dict[str, Any] = {k: v for k, v in view.kw.items() if k in ("description", "title")}
    members: list[Any] = [None] * len(types)
    out["anyOf"] = members
    base = (task.out_ptr, "anyOf")
    origin = view.origin("type")
    for j, t in enumerate(types):
        layers = (*view.layers, Layer({"type": t}, origin, CONJ, NO_SKIP))
        e.push(layers, task, members, j, (base, j), MEMBER | member_flags)
    return out


def is_null_member(member: Layers) -> bool:
    node = member[0].node
    if len(member) != 1 or not isinstance(node, dict):
        return False
    return type_set(node.get("type")) == frozenset(("null",)) and not any(
        is_assertion(k) for k in node if k != "type"
    )
