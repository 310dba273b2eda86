"""OpenAI strict mode's rule on unions of objects (docs/provider-schema-rules.md §2): no two object
members of one `anyOf` start with the same key.

The rule names only each member's first key, and an object's key order constrains nothing in
JSON Schema, so the rule is met by reordering: a member that starts with a key another member
starts with gets another of its own properties moved to the front. Every call valid before stays
valid and none is added; the one effect is the order in which the model writes that object's keys
(strict mode generates keys in schema order, §2), reported as `reordered`, a change of form.

Each object has one order for the whole schema: a `$defs` entry several unions reference, or an
object of a union already settled, keeps the first key it was given (the unions that need a
reorder are settled first, so one that needs none does not fix an order another cannot take).
Which member gets which first key is a matching (members to their own keys, no key used twice),
found by augmenting paths, iteratively, preferring the order the schema has; where no matching
exists (three members over the same two keys) the tool is refused. Settling union by union can
refuse a schema some other choice of orders would fit (never the reverse).
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._walk import Refused

ORIGINS = "origins"
"""`Engine.state` key: id of an output object -> where its `properties` are in the original."""


def distinct_first_keys(e: Engine, unions: list[list[Any]], defs: dict[str, Any]) -> None:
    """Reorder the properties of union members so that no two members of one `anyOf` start with
    the same key (each reported), or refuse when no order does it."""
    settled: dict[int, str] = {}
    """id of an object already given its first key -> that key."""
    found = [
        [node for node in (_object_of(m, defs) for m in members) if node is not None] for members in unions
    ]
    # the unions that need a reorder choose first; the others then hold to what was chosen
    for objects in sorted((o for o in found if len(o) > 1), key=lambda o: not _shared(o)):
        firsts = [next(iter(node["properties"])) for node in objects]
        if len(set(firsts)) < len(firsts):
            firsts = _reorder(e, objects, firsts, settled)
        for node, first in zip(objects, firsts, strict=True):
            settled[id(node)] = first


def _shared(objects: list[dict[str, Any]]) -> bool:
    """Whether two of the objects start with the same key."""
    firsts = [next(iter(node["properties"])) for node in objects]
    return len(set(firsts)) < len(firsts)


def _object_of(member: Any, defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object a member is (following a `$ref` into `$defs`), when it declares properties."""
    target = member
    if isinstance(member, dict) and isinstance(member.get("$ref"), str):
        name = member["$ref"].rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        target = defs.get(name)
    properties = target.get("properties") if isinstance(target, dict) else None
    return target if isinstance(properties, dict) and properties else None


def _reorder(
    e: Engine, objects: list[dict[str, Any]], firsts: list[str], settled: dict[int, str]
) -> list[str]:
    """Each member's new first key (the members' properties reordered in place, each reported)."""
    shared = next(key for key in firsts if firsts.count(key) > 1)
    keys = _matching(objects, settled)
    if keys is None:
        raise Refused(
            R.OPENAI_STRICT_FIRST_KEYS,
            f"object members of one anyOf start with the same key {shared!r} and no order of their "
            "properties gives each a first key of its own; OpenAI strict mode refuses that ('Objects "
            "provided via anyOf must not share identical first keys')",
        )
    origins: dict[int, P.Ptr] = e.state.get(ORIGINS, {})
    for node, old, new in zip(objects, firsts, keys, strict=True):
        if new == old:
            continue
        properties = node["properties"]
        node["properties"] = {new: properties[new], **{k: v for k, v in properties.items() if k != new}}
        required = node.get("required")
        if isinstance(required, list) and new in required:
            # strict mode lists every key in `required`, in the order of `properties`
            node["required"] = [new, *(name for name in required if name != new)]
        e.loss(
            P.join(P.to_str(origins.get(id(node))), "properties"),
            "properties",
            "reordered",
            f"{new!r} moved to the front (it started with {old!r}, as another member of the anyOf does; "
            "OpenAI strict mode refuses identical first keys): the model writes this object's keys in "
            "the new order",
            "form",
        )
    return keys


def _matching(objects: list[dict[str, Any]], settled: dict[int, str]) -> list[str] | None:
    """A first key per member, no key twice; an object already settled keeps its key."""
    fixed = {i: settled[id(node)] for i, node in enumerate(objects) if id(node) in settled}
    if len(set(fixed.values())) < len(fixed) or len({id(node) for node in objects}) < len(objects):
        return None
    owner = {key: i for i, key in fixed.items()}
    candidates = [list(node["properties"]) for node in objects]
    for start in range(len(objects)):
        if start not in fixed and not _augment(start, candidates, owner, fixed):
            return None
    keys = [""] * len(objects)
    for key, i in owner.items():
        keys[i] = key
    return keys


def _augment(start: int, candidates: list[list[str]], owner: dict[str, int], fixed: dict[int, str]) -> bool:
    """Give member `start` a key: a free one of its own, or one whose member can move on to
    another (breadth first over the members; a settled member never moves)."""
    came_from: dict[int, tuple[int, str] | None] = {start: None}
    """member -> (the member that wants its key, that key)"""
    queue = [start]
    for member in queue:
        for key in candidates[member]:
            holder = owner.get(key)
            if holder is None:
                _flip(member, key, owner, came_from)
                return True
            if holder not in fixed and holder not in came_from:
                came_from[holder] = (member, key)
                queue.append(holder)
    return False


def _flip(member: int, key: str, owner: dict[str, int], came_from: dict[int, tuple[int, str] | None]) -> None:
    """Along the path found: each member takes the key it reached, the one before it the key it
    gave up."""
    step: tuple[int, str] | None = (member, key)
    while step is not None:
        member, key = step
        owner[key] = member
        step = came_from[member]
