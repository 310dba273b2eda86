"""Arguments between the original schema and a strict rewrite of it, both ways.

OpenAI strict mode makes every property required, so an optional property becomes required +
nullable and a model sends `null` for a field it means to omit. `restore_arguments` turns such a
null back into an omitted field - only for the fields the pass made nullable, so a null the
original schema allowed stays a null. `arguments_to_wire` goes the other way (what a model under
the rewritten schema sends for the same call), for measuring a rewrite's fidelity.

Both walk the arguments beside the rewritten schema (following its `$ref`s into `$defs` and
picking the `anyOf` member the value fits), iteratively, and never modify their input: an
unchanged value comes back as the same object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema._vocab import admits, json_type_of, type_set

_MAX_REF_HOPS = 32


class ArgumentMap(BaseModel):
    """How arguments differ between the original schema and the rewritten one (strict modes).

    Keys are JSON pointers to object nodes of the REWRITTEN schema.
    """

    model_config = ConfigDict(frozen=True)

    made_nullable: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Optional keys the pass made required + nullable: a null there means "omitted"."""
    made_required: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Every key the pass made required (a model must send it; null when it means to omit it)."""
    closed: tuple[str, ...] = ()
    """Objects the pass closed with additionalProperties: false (undeclared keys cannot be sent)."""
    narrowed_types: tuple[str, ...] = ()
    """Untyped nodes the pass gave the one type their keywords imply (values of other types
    cannot be sent); reported as `narrowed` losses. Arguments need no mapping for them."""

    @property
    def empty(self) -> bool:
        return not (self.made_nullable or self.made_required or self.closed)


def restore_arguments(
    schema: dict[str, Any], mapping: ArgumentMap, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Arguments sent under the rewritten `schema`, as the original schema means them."""
    nullable = {k: frozenset(v) for k, v in mapping.made_nullable.items()}
    if not nullable:
        return arguments

    def rewrite(value: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        keys = nullable.get(pointer)
        if not keys or not any(value.get(k, 0) is None for k in keys):
            return None
        return {k: v for k, v in value.items() if not (v is None and k in keys)}

    return _walk(schema, arguments, rewrite)


def arguments_to_wire(
    schema: dict[str, Any], mapping: ArgumentMap, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Arguments valid under the original schema, as a model under the rewritten `schema` sends
    them: omitted fields the pass made required become null, and undeclared keys of objects the
    pass closed are left out (the pass reported that closing as `narrowed`)."""
    required = {k: v for k, v in mapping.made_required.items()}
    closed = frozenset(mapping.closed)

    def rewrite(value: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        fill = [k for k in required.get(pointer, ()) if k not in value]
        node = _node_at(schema, pointer)
        declared = node.get("properties", {}) if isinstance(node, dict) else {}
        extra = [k for k in value if k not in declared] if pointer in closed else []
        if not fill and not extra:
            return None
        out = {k: v for k, v in value.items() if k not in extra}
        for key in fill:
            out[key] = None
        return out

    return _walk(schema, arguments, rewrite)


def _node_at(schema: dict[str, Any], pointer: str) -> Any:
    tokens = P.parse_fragment("#" + pointer)
    if tokens is None:
        return None
    found, node = P.resolve(schema, tokens)
    return node if found else None


_Value = TypeVar("_Value")
_Rewrite = Callable[[dict[str, Any], str], "dict[str, Any] | None"]


def _walk(schema: dict[str, Any], arguments: _Value, rewrite: _Rewrite) -> _Value:
    """Copy-on-write walk of `arguments` beside `schema`; `rewrite(obj, pointer)` may return a
    replacement for an object found at the schema node `pointer` (None: unchanged). A changed
    value is written into copies of its containers, up to a new root; the input is untouched."""
    # one entry per visited container: [value, parent index, key in parent, copied?]
    entries: list[list[Any]] = [[arguments, -1, None, False]]
    stack: list[tuple[int, str]] = [(0, "")]

    def replace(index: int, value: Any) -> None:
        entries[index][0] = value
        entries[index][3] = True
        while True:
            _, parent, key, _ = entries[index]
            if parent < 0:
                return
            holder = entries[parent]
            if not holder[3]:
                holder[0] = dict(holder[0]) if isinstance(holder[0], dict) else list(holder[0])
                holder[3] = True
                holder[0][key] = entries[index][0]
                index = parent
                continue
            holder[0][key] = entries[index][0]
            return

    while stack:
        index, pointer = stack.pop()
        value = entries[index][0]
        settled = _settle(schema, pointer, value)
        if settled is None:
            continue
        node = _node_at(schema, settled)
        if isinstance(value, dict):
            replaced = rewrite(value, settled)
            if replaced is not None:
                replace(index, replaced)
                value = replaced
            props = node.get("properties") if isinstance(node, dict) else None
            if isinstance(props, dict):
                for name, child in value.items():
                    if name in props and isinstance(child, (dict, list)):
                        entries.append([child, index, name, False])
                        stack.append((len(entries) - 1, P.join(settled, "properties", name)))
        elif isinstance(value, list) and isinstance(node, dict) and isinstance(node.get("items"), dict):
            for position, child in enumerate(value):
                if isinstance(child, (dict, list)):
                    entries.append([child, index, position, False])
                    stack.append((len(entries) - 1, P.join(settled, "items")))
    # A rewrite replaces an object by an object: the root keeps the type it came in with.
    return cast(_Value, entries[0][0])


def _settle(schema: dict[str, Any], pointer: str, value: Any) -> str | None:
    """Follow `$ref`s and pick the `anyOf` member `value` fits, down to a node that describes it."""
    for _ in range(_MAX_REF_HOPS):
        node = _node_at(schema, pointer)
        if not isinstance(node, dict):
            return None
        ref = node.get("$ref")
        if isinstance(ref, str):
            tokens = P.parse_fragment(ref)
            if tokens is None:
                return None
            pointer = "".join("/" + P.escape(t) for t in tokens)
            continue
        members = node.get("anyOf")
        if isinstance(members, list) and "properties" not in node and "items" not in node:
            choice = _pick_member(schema, members, value)
            if choice is None:
                return None
            pointer = P.join(pointer, "anyOf", choice)
            continue
        return pointer
    return None


def _pick_member(schema: dict[str, Any], members: list[Any], value: Any) -> int | None:
    json_type = json_type_of(value)
    best: tuple[int, int] | None = None
    for index, member in enumerate(members):
        target = member
        for _ in range(_MAX_REF_HOPS):
            if isinstance(target, dict) and isinstance(target.get("$ref"), str):
                tokens = P.parse_fragment(target["$ref"])
                target = P.resolve(schema, tokens)[1] if tokens is not None else None
            else:
                break
        if not isinstance(target, dict):
            continue
        types = type_set(target.get("type"))
        if types is not None and not admits(types, json_type):
            continue
        score = 0
        if isinstance(value, dict) and isinstance(target.get("properties"), dict):
            props = target["properties"]
            score = sum(1 for k in value if k in props) - sum(1 for k in value if k not in props)
        if best is None or score > best[0]:
            best = (score, index)
    return None if best is None else best[1]
