"""Whole-output checks of the strict modes, run once the output is built.

- OpenAI's documented size limits (docs/provider-schema-rules.md §2): at most 5,000 object
  properties, 1,000 enum values (the largest enums are dropped first, each reported), 120,000
  characters of property names and enum/const values, 15,000 characters for one string enum of
  more than 250 values, nesting depth 10 (following references into `$defs`); and no two object
  members of one `anyOf` starting with the same key.
- Anthropic strict tool use supports no recursion (§5): `find_cycle` over the definitions the
  pass emitted.

Iterative throughout: a chain of thousands of definitions must not recurse.
"""

from __future__ import annotations

import enum
from typing import Any

from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._first_keys import distinct_first_keys
from xpeval.adapters.schema._walk import Refused

MAX_PROPERTIES = 5_000
MAX_ENUM_VALUES = 1_000
MAX_CHARS = 120_000
LONG_STRING_ENUM = 250
"""A string enum of more values than this ..."""
LONG_STRING_ENUM_CHARS = 15_000
"""... may have at most this many characters."""
MAX_DEPTH = 10


class _Visit(enum.Enum):
    ON_PATH = "on the current path"
    DONE = "done"


def check_openai_limits(e: Engine, out: dict[str, Any]) -> None:
    """Refuse what cannot fit the documented limits; drop the largest enums first."""
    state = e.state
    defs = out.get("$defs", {})
    defs_map = defs if isinstance(defs, dict) else {}
    total_props = state.get("properties", 0)
    if total_props > MAX_PROPERTIES:
        raise Refused(
            R.OPENAI_STRICT_LIMITS,
            f"the schema has {total_props} properties; OpenAI strict mode allows at most 5,000",
        )
    chars = state.get("chars", 0) + _fit_enums(e, state.get("enums", []))
    if chars > MAX_CHARS:
        raise Refused(
            R.OPENAI_STRICT_LIMITS,
            f"property names and enum values add up to {chars} characters; OpenAI strict mode allows 120,000",
        )
    # nesting cannot exceed the walk's own depth unless references lead into $defs
    if defs or e.deepest > MAX_DEPTH:
        depth = _nesting_depth(out, defs_map)
        if depth > MAX_DEPTH:
            raise Refused(
                R.OPENAI_STRICT_LIMITS, f"the schema nests {depth} levels deep; OpenAI strict mode allows 10"
            )
    distinct_first_keys(e, state.get("unions", []), defs_map)


def _fit_enums(e: Engine, enums: list[tuple[dict[str, Any], str]]) -> int:
    """Drop the enums past the limits (reported); the characters the remaining ones add up to."""
    chars = total_values = 0
    for node, pointer in enums:
        values = node.get("enum", [])
        size = _chars(values)
        if (
            len(values) > LONG_STRING_ENUM
            and all(isinstance(v, str) for v in values)
            and size > LONG_STRING_ENUM_CHARS
        ):
            _drop_enum(e, node, pointer, f"{len(values)} string values of {size} characters exceed 15,000")
            continue
        total_values += len(values)
        chars += size
    if total_values <= MAX_ENUM_VALUES:
        return chars
    for node, pointer in sorted(enums, key=lambda item: -len(item[0].get("enum", []))):
        if total_values <= MAX_ENUM_VALUES:
            break
        values = node.get("enum")
        if values is None:
            continue
        total_values -= len(values)
        chars -= _chars(values)
        _drop_enum(e, node, pointer, "the schema's enums exceed 1,000 values in total")
    return chars


def _chars(values: list[Any]) -> int:
    return sum(len(str(v)) for v in values)


def _drop_enum(e: Engine, node: dict[str, Any], pointer: str, why: str) -> None:
    node.pop("enum", None)
    if node.get("type") is None:
        node["type"] = "string"
    e.loss(pointer, "enum", "dropped", f"{why} (OpenAI strict mode limit)")


# --------------------------------------------------------------------------- nesting depth

_DEFS_PREFIX = "#/$defs/"


def _nesting_depth(out: dict[str, Any], defs: dict[str, Any]) -> int:
    """Object/array nesting levels, following references into `$defs` (a cycle adds nothing)."""
    local = {
        name: _local_depth(tree, out if name is not None else None, defs)
        for name, tree in [(None, out), *defs.items()]
    }
    return _depth_through_refs(local)[None]


def _local_depth(tree: Any, skip: Any, defs: dict[str, Any]) -> tuple[int, list[tuple[int, str]]]:
    """How deep one tree nests by itself, and the (level, definition) of each reference in it.
    `skip`: the root document, when it is met inside a definition (it is measured on its own)."""
    deepest = 0
    refs: list[tuple[int, str]] = []
    stack: list[tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, dict) or node is skip:
            continue
        deepest = max(deepest, level)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            target = ref[len(_DEFS_PREFIX) :].replace("~1", "/").replace("~0", "~")
            if target in defs:
                refs.append((level, target))
        props = node.get("properties")
        if isinstance(props, dict):
            stack.extend((v, level + 1) for v in props.values())
        if isinstance(node.get("items"), dict):
            stack.append((node["items"], level + 1))
        members = node.get("anyOf")
        if isinstance(members, list):
            stack.extend((m, level) for m in members)
    return deepest, refs


_Local = dict[str | None, tuple[int, list[tuple[int, str]]]]


def _depth_through_refs(local: _Local) -> dict[str | None, int]:
    """Per tree: its depth with the depths of the definitions it references added at the levels
    it references them (depth first; a reference back onto the current path adds nothing)."""
    total: dict[str | None, int] = {}
    for start in local:
        if start in total:
            continue
        on_path: set[str | None] = set()
        work: list[tuple[str | None, bool]] = [(start, False)]
        while work:
            name, done = work.pop()
            if done:
                on_path.discard(name)
                base, refs = local[name]
                total[name] = max([base] + [lvl + total.get(t, 0) for lvl, t in refs if t not in on_path])
            elif name not in total and name not in on_path:
                on_path.add(name)
                work.append((name, True))
                work.extend((t, False) for _, t in local[name][1] if t not in total and t not in on_path)
    return total


# --------------------------------------------------------------------------- recursion


def find_cycle(edges: set[tuple[str | None, str]]) -> list[str] | None:
    """A cycle in the graph of definitions referencing definitions ("root" is the document)."""
    graph: dict[str | None, list[str]] = {}
    for source, target in sorted(edges, key=lambda edge: (edge[0] or "", edge[1])):
        graph.setdefault(source, []).append(target)
    visits: dict[str | None, _Visit] = {}
    for start in list(graph):
        if start not in visits:
            cycle = _cycle_from(graph, start, visits)
            if cycle is not None:
                return [c or "root" for c in cycle]
    return None


def _cycle_from(
    graph: dict[str | None, list[str]], start: str | None, visits: dict[str | None, _Visit]
) -> list[str | None] | None:
    stack: list[tuple[str | None, int]] = [(start, 0)]
    path: list[str | None] = []
    while stack:
        node, index = stack.pop()
        if index == 0:
            visits[node] = _Visit.ON_PATH
            path.append(node)
        children = graph.get(node, [])
        if index >= len(children):
            visits[node] = _Visit.DONE
            path.pop()
            continue
        stack.append((node, index + 1))
        nxt = children[index]
        if visits.get(nxt) is _Visit.ON_PATH:
            return [*path[path.index(nxt) :], nxt]
        if nxt not in visits:
            stack.append((nxt, 0))
    return None
