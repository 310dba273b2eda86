"""Shaping steps for combinators several dialects share: `oneOf` as `anyOf`, a parent's `type`
moved into the members, a node of several types split into one member per type."""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._values import canonical
from xpeval.adapters.schema._vocab import admits, is_assertion, type_set
from xpeval.adapters.schema._walk import NO_SKIP, Layer, LayerKind, Layers, Task, View

_MAX_REF_HOPS = 8
_UNRESOLVED: Any = object()


def one_of_as_any_of(e: Engine, view: View) -> None:
    """`oneOf` -> `anyOf`. Exact when the members cannot overlap (different types, or a
    discriminator property with different constant values); otherwise "exactly one" became
    "at least one", which is reported as relaxed."""
    kw = view.kw
    members = kw.pop("oneOf")
    if "anyOf" in kw:
        # both present: the oneOf cannot become one more anyOf without changing the meaning
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


def _follow_bare_refs(e: Engine, node: Any) -> Any:
    """The node at the end of a chain of bare `$ref`s (at most `_MAX_REF_HOPS`); `_UNRESOLVED`
    when one of them does not resolve."""
    for _ in range(_MAX_REF_HOPS):
        if not (isinstance(node, dict) and set(node) == {"$ref"} and isinstance(node["$ref"], str)):
            break
        target = e.resolve(node["$ref"])
        if target is None:
            return _UNRESOLVED
        node = target[0]
    return node


def _disjoint(e: Engine, members: list[Layers]) -> bool:
    """Whether no value can match two of the members (so `anyOf` means what `oneOf` meant)."""
    nodes = []
    for layers in members:
        if len(layers) != 1:
            return False
        node = _follow_bare_refs(e, layers[0].node)
        if not isinstance(node, dict):
            return False
        nodes.append(node)
    return _types_disjoint(nodes) or _discriminated(nodes)


def _types_disjoint(nodes: list[dict[str, Any]]) -> bool:
    """Every member is typed and no two share a type (integers are numbers)."""
    seen: set[str] = set()
    for node in nodes:
        types = type_set(node.get("type"))
        if types is None:
            return False
        expanded = set(types) | ({"integer"} if "number" in types else set())
        if expanded & seen:
            return False
        seen |= expanded
    return True


def _discriminated(nodes: list[dict[str, Any]]) -> bool:
    """A discriminator: one property every member requires, whose const/enum values differ
    between the members."""
    shared: set[str] | None = None
    for node in nodes:
        # the members are checked to be well formed only after this test: a `required` entry
        # that is not a name counts for nothing here (the member walk refuses it)
        required = node.get("required")
        keys = {k for k in required if isinstance(k, str)} if isinstance(required, list) else set()
        shared = keys if shared is None else shared & keys
    return any(_values_distinct(nodes, prop) for prop in sorted(shared or ()))


def _values_distinct(nodes: list[dict[str, Any]], prop: str) -> bool:
    values: set[str] = set()
    for node in nodes:
        # not yet checked to be well formed (the members are walked after this test): a
        # `properties` that is not a map is no discriminator, and the member walk refuses it
        properties = node.get("properties")
        sub = properties.get(prop) if isinstance(properties, dict) else None
        if not isinstance(sub, dict):
            return False
        options = [sub["const"]] if "const" in sub else sub.get("enum")
        if not isinstance(options, list):
            return False
        keys = {canonical(v) for v in options}
        if keys & values:
            return False
        values |= keys
    return True


def member_types_of(e: Engine, member: Layers) -> frozenset[str] | None:
    """The `type` of a union member, following a bare `$ref` chain (None when unknown)."""
    node = _follow_bare_refs(e, member[0].node)
    if not isinstance(node, dict) or len(member) != 1:
        return None
    return type_set(node.get("type"))


def type_into_members(e: Engine, view: View, types: frozenset[str]) -> None:
    """`{type: T, anyOf: [a, b]}` means `anyOf: [T and a, T and b]`: the type moves into each
    member that does not already say it (exact)."""
    kw = view.kw
    t = kw.pop("type")
    layer = Layer({"type": t}, view.origin("type"), LayerKind.CONJ, NO_SKIP)
    members = []
    for member in kw["anyOf"]:
        member_types = member_types_of(e, member)
        if member_types is not None and all(admits(types, m) for m in member_types):
            members.append(member)
        else:
            members.append((*member, layer))
    kw["anyOf"] = members


def split_by_type(
    e: Engine, view: View, task: Task, types: list[str], *, nullable: bool = False
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
        layers = (*view.layers, Layer({"type": t}, origin, LayerKind.CONJ, NO_SKIP))
        e.push(layers, task, members, j, (base, j), nullable=nullable, member=True)
    return out


def is_null_member(member: Layers) -> bool:
    """A member that admits null and nothing else, with no other assertion."""
    node = member[0].node
    if len(member) != 1 or not isinstance(node, dict):
        return False
    return type_set(node.get("type")) == frozenset(("null",)) and not any(
        is_assertion(k) for k in node if k != "type"
    )
