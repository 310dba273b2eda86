"""Strict modes: OpenAI Structured Outputs / strict tools (§2, §3) and Anthropic strict tool use (§5).

Both compile the schema into a grammar, so every object is closed (`additionalProperties:
false`) and only a subset of keywords is allowed. What differs:

- OpenAI: every property is required; an optional one becomes required + nullable, and
  `PassResult.restore_arguments` turns the null the model sends for it back into "omitted".
  `default` is refused. Recursion is supported. Limits: nesting depth 10, 5,000 properties,
  1,000 enum values, 120,000 characters of names and values, 15,000 characters for one string
  enum of more than 250 values.
- Anthropic: optional properties stay optional (few of them: the grammar budget); `allOf`
  is supported; recursion is not; numeric, length and most array bounds are not enforced.

Unsupported scalar constraints are stated in the description (what the official SDK helpers
do) and reported as `moved-to-description`; unsupported subschemas are dropped and reported.
A free-form object (explicit `additionalProperties: true` or a schema, `patternProperties`, a
nested object without properties) cannot be expressed at all and is refused (§13.5); an
implicitly open object is closed and reported as `narrowed`.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.schema import _pointer as P
from adapters.schema._engine import (
    ACT_INLINE,
    ACT_KEEP,
    ACT_WRAP,
    DEFS_MODE,
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
    accepts_null,
    add_description,
    copy_node,
    drop_inapplicable,
    drop_keywords,
    families_used,
    format_constraints,
    inferred_type,
    narrow_to_type,
    one_of_as_any_of,
    root_object,
)
from adapters.schema._vocab import SCHEMA_POSITIONS, TYPE_ORDER, type_set

_LOOKAROUND = re.compile(r"\(\?<?[=!]")

_OPENAI_KEEP = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "description",
        "title",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
_OPENAI_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_ANTHROPIC_KEEP = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "description",
        "title",
        "format",
        "minItems",
    }
)
_ANTHROPIC_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_ANNOTATION_SIBLINGS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated"})


def _ap_state(layers: Layers | None) -> str:
    """'absent' | 'closed' (false) | 'open' (true / {}) | 'schema' for additionalProperties."""
    if layers is None:
        return "absent"
    nodes = [layer.node for layer in layers]
    if any(n is False for n in nodes):
        return "closed"
    if all(n is True or n == {} for n in nodes):
        return "open"
    return "schema"


class StrictRules(Rules):
    ref_mode = DEFS_MODE
    refs_must_resolve = True
    resolve_root_unions = True
    inline_reason = "strict mode takes no assertions beside $ref"
    flatten_root_allof = True
    keep: frozenset[str] = frozenset()
    formats: frozenset[str] = frozenset()
    all_required = False
    _leaf_keywords: dict[str, frozenset[str]] = {}

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> int:
        siblings = e.sibling_keywords(layers, i)
        if not siblings:
            return ACT_KEEP
        if siblings <= _ANNOTATION_SIBLINGS:
            return ACT_WRAP
        return ACT_INLINE

    def top(self, e: Engine) -> Any | None:
        return None

    def boolean(self, e: Engine, task: Task, layers: Layers) -> Any:
        where = P.to_str(layers[0].ptr) or "/"
        raise Refused(f"{self.label} cannot express the boolean schema at {where}")

    # ------------------------------------------------------------------ shape

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        e.check_common(view)
        kw = view.kw
        t = kw.get("type")
        leaf_ok = self._leaf_keywords.get(t) if type(t) is str else None
        if leaf_ok is not None and kw.keys() <= leaf_ok:
            # the common case: a scalar whose every keyword this mode keeps as it is
            leaf = dict(kw)
            self.after_shape(e, view, leaf)
            return leaf
        if task.flags & ROOT:
            root_object(e, view)
            kw = view.kw
        ref = kw.pop("$ref", None)
        if ref is not None and not kw:
            return {"$ref": e.ref_out(ref, task)}
        if "oneOf" in kw:
            one_of_as_any_of(e, view)
        self._ensure_type(e, view, task, ref)
        kw = view.kw
        types = type_set(kw.get("type"))
        is_object = types is not None and "object" in types
        if is_object:
            self._check_object(e, view, task)
        if types is not None and "array" in types and "items" not in kw:
            raise Refused(
                f"the array at {P.to_str(view.ptr) or '/'} has no items schema; {self.label} needs the "
                "element type"
            )
        drop_inapplicable(view, types)
        notes: dict[str, Any] = {}
        self._drop_unsupported(e, view, notes)
        out: dict[str, Any] = {}
        required_keys: list[str] = []
        optional: list[str] = []
        if is_object:
            props = kw.get("properties", {})
            required = kw.get("required", [])
            missing = [r for r in required if r not in props]
            if missing:
                raise Refused(
                    f"required lists {missing} at {view.at('required')} without a schema in properties; "
                    f"{self.label} closes every object, so such a key could never be sent"
                )
            optional = [name for name in props if name not in required]
            required_keys = list(props) if self.all_required else list(required)
        for key, value in kw.items():
            if key == "additionalProperties":
                continue
            if key == "properties" and is_object:
                slot: dict[str, Any] = {}
                out[key] = slot
                base = (task.out_ptr, key)
                for name, layers in value.items():
                    slot[name] = None
                    flags = NULLABLE if self.all_required and name in optional else 0
                    e.push(layers, task, slot, name, (base, name), flags)
            elif key == "required" and is_object:
                out[key] = required_keys
            elif key in SCHEMA_POSITIONS:
                copy_node(e, view, task, out, only=key)
            else:
                out[key] = value
        if ref is not None:
            # annotation siblings beside a reference: the reference moves into a one-member
            # anyOf, which strict mode allows siblings of (and which means the same)
            wrapper = {"$ref": e.ref_out(ref, task)}
            if "anyOf" in out:
                out.setdefault("allOf", []).append(wrapper)  # pragma: no cover - anyOf + $ref + annotations
            else:
                out["anyOf"] = [wrapper]
        if is_object:
            out.setdefault("properties", {})
            if self.all_required or "required" in out or required_keys:
                out["required"] = required_keys
            out["additionalProperties"] = False
            pointer = e.out_pointer(task.out_ptr)
            if self.all_required and optional:
                e.made_required[pointer] = optional
        if notes:
            add_description(out, format_constraints(notes))
        self.after_shape(e, view, out)
        return out

    def after_shape(self, e: Engine, view: View, out: dict[str, Any]) -> None:
        """Per-dialect bookkeeping of the finished node."""

    def _ensure_type(self, e: Engine, view: View, task: Task, ref: str | None) -> None:
        """Strict modes need a type on every node that is not a reference or a union."""
        kw = view.kw
        if "type" in kw or "anyOf" in kw or ref is not None:
            return
        if "enum" in kw or "const" in kw:
            values = kw["enum"] if "enum" in kw else [kw["const"]]
            inferred = inferred_type(values)
            if inferred is not None:
                view.kw = {"type": inferred, **kw}
                return
        families = families_used(kw)
        if len(families) == 1:
            family = families.pop()
            view.kw = {"type": family, **kw}
            narrow_to_type(e, view, task, family)
            return
        raise Refused(
            f"the schema at {P.to_str(view.ptr) or '/'} accepts any value; {self.label} needs a type on "
            "every "
            "node (an unconstrained value cannot be expressed)"
        )

    def _check_object(self, e: Engine, view: View, task: Task) -> None:
        kw = view.kw
        state = _ap_state(kw.get("additionalProperties"))
        if state in ("open", "schema") or "patternProperties" in kw:
            what = "patternProperties" if "patternProperties" in kw else f"additionalProperties ({state})"
            raise Refused(
                f"the object at {P.to_str(view.ptr) or '/'} is free-form ({what}); {self.label} closes "
                "every object, so it cannot be expressed (§13.5)"
            )
        props = kw.get("properties")
        if not props and not task.flags & ROOT and state != "closed":
            raise Refused(
                f"the object at {P.to_str(view.ptr) or '/'} declares no properties (a free-form object); "
                f"{self.label} closes every object, so it cannot be expressed (§13.5)"
            )
        if state == "absent":
            e.closed.append(e.out_pointer(task.out_ptr))
            e.loss(
                P.join(P.to_str(view.ptr), "additionalProperties"),
                "additionalProperties",
                "narrowed",
                f"open object closed ({self.label} requires additionalProperties: false): undeclared keys "
                "can "
                "no longer be sent",
            )

    def _drop_unsupported(self, e: Engine, view: View, notes: dict[str, Any]) -> None:
        kw = view.kw
        fmt = kw.get("format")
        if fmt is not None and fmt not in self.formats:
            notes["format"] = kw.pop("format")
            e.loss(
                view.at("format"),
                "format",
                "moved-to-description",
                f"{self.label} does not support this format",
            )
        self.drop_dialect_specific(e, view, notes)
        unsupported = [k for k in kw if k not in self.keep]
        if unsupported:
            drop_keywords(
                e,
                view,
                unsupported,
                reason=f"{self.label} does not support this keyword",
                to_description=notes,
            )
        if "enum" in kw and not all(v is None or isinstance(v, (str, int, float, bool)) for v in kw["enum"]):
            kw.pop("enum")
            e.loss(
                view.at("enum"), "enum", "dropped", f"{self.label} supports enums of primitive values only"
            )

    def drop_dialect_specific(self, e: Engine, view: View, notes: dict[str, Any]) -> None:
        """Keywords a dialect supports only with some values."""


def _leaf_keywords(keep: frozenset[str]) -> dict[str, frozenset[str]]:
    """Per scalar type: the keywords a node may have to be copied unchanged (the fast path)."""
    from adapters.schema._vocab import TYPED_KEYWORDS

    general = frozenset({"type", "description", "title", "enum"}) & keep
    return {
        t: general | (TYPED_KEYWORDS.get(t, frozenset()) & keep) - {"format", "pattern"}
        for t in ("string", "integer", "number", "boolean", "null")
    }


class OpenAIStrictRules(StrictRules):
    name = "openai-strict"
    label = "OpenAI strict mode"
    keep = _OPENAI_KEEP
    formats = _OPENAI_FORMATS
    _leaf_keywords = _leaf_keywords(_OPENAI_KEEP)
    all_required = True
    flatten_allof = True

    def drop_dialect_specific(self, e: Engine, view: View, notes: dict[str, Any]) -> None:
        kw = view.kw
        pattern = kw.get("pattern")
        if isinstance(pattern, str) and _LOOKAROUND.search(pattern):
            notes["pattern"] = kw.pop("pattern")
            e.loss(
                view.at("pattern"),
                "pattern",
                "moved-to-description",
                "OpenAI strict mode refuses look-around in patterns",
            )
        if "default" in kw:
            kw.pop("default")
            e.loss(
                view.at("default"), "default", "dropped", "'default' is not permitted in OpenAI strict mode"
            )

    def after_shape(self, e: Engine, view: View, out: dict[str, Any]) -> None:
        # what the size limits count, gathered while building (no second walk of the output)
        state = e.state
        props = out.get("properties")
        if props:
            state["properties"] = state.get("properties", 0) + len(props)
            state["chars"] = state.get("chars", 0) + sum(len(name) for name in props)
        if "enum" in out:
            state.setdefault("enums", []).append((out, view.at("enum")))
        if "const" in out:
            state["chars"] = state.get("chars", 0) + len(str(out["const"]))
        if "anyOf" in out:
            state.setdefault("unions", []).append(out["anyOf"])

    def make_nullable(self, e: Engine, task: Task, out: Any) -> Any:
        """An optional property becomes required and nullable; a null the model sends for it
        means "omitted" (restored by `restore_arguments`)."""
        assert task.out_ptr is not None and task.out_ptr[0] is not None
        parent, key = task.out_ptr[0][0], task.key
        # The output's combinator members are still being built here: ask the input too.
        input_nodes = [layer.node for layer in task.layers if layer.node is not True]
        if accepts_null(out) or (input_nodes and all(accepts_null(node) for node in input_nodes)):
            e.loss(
                _original_pointer(task),
                "required",
                "relaxed",
                "optional property made required (OpenAI strict mode): it was nullable already, so the model "
                "sends null to omit it and an explicit null can no longer be told from an omission",
            )
            return out
        e.made_nullable.setdefault(e.out_pointer(parent), []).append(key)
        if isinstance(out, dict):
            simple = not ({"anyOf", "$ref", "const", "allOf"} & out.keys())
            types = type_set(out.get("type"))
            if simple and types is not None:
                out["type"] = [t for t in TYPE_ORDER if t in types or t == "null"]
                if "enum" in out:
                    out["enum"] = [*out["enum"], None]
                return out
            if set(out) - {"description", "title"} == {"anyOf"}:
                out["anyOf"].append({"type": "null"})
                return out
        return {"anyOf": [out, {"type": "null"}]}

    def finish(self, e: Engine, out: dict[str, Any]) -> None:
        _check_openai_limits(e, out)


class AnthropicStrictRules(StrictRules):
    name = "anthropic-strict"
    label = "Anthropic strict tool use"
    keep = _ANTHROPIC_KEEP
    formats = _ANTHROPIC_FORMATS
    # (enum members must be primitive here, which the full path checks)
    _leaf_keywords = _leaf_keywords(_ANTHROPIC_KEEP - {"enum"})

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> int:
        action = super().ref_action(e, task, layers, i)
        return ACT_INLINE if action == ACT_WRAP else action

    def drop_dialect_specific(self, e: Engine, view: View, notes: dict[str, Any]) -> None:
        kw = view.kw
        if "minItems" in kw and kw["minItems"] not in (0, 1):
            notes["minItems"] = kw.pop("minItems")
            e.loss(
                view.at("minItems"),
                "minItems",
                "moved-to-description",
                "Anthropic strict tool use supports minItems of 0 or 1 only",
            )
        if "default" in kw:
            notes["default"] = kw.pop("default")

    def finish(self, e: Engine, out: dict[str, Any]) -> None:
        cycle = _find_cycle(e.def_edges)
        if cycle:
            raise Refused(
                f"the schema is recursive ({' -> '.join(cycle)}); Anthropic strict tool use does not support "
                "recursive schemas"
            )


def _original_pointer(task: Task) -> str:
    return P.to_str(task.layers[0].ptr)


def _find_cycle(edges: set[tuple[str | None, str]]) -> list[str] | None:
    graph: dict[str | None, list[str]] = {}
    for source, target in sorted(edges, key=lambda e: (e[0] or "", e[1])):
        graph.setdefault(source, []).append(target)
    state: dict[str | None, int] = {}
    for start in list(graph):
        if state.get(start):
            continue
        stack: list[tuple[str | None, int]] = [(start, 0)]
        path: list[str | None] = []
        while stack:
            node, index = stack.pop()
            if index == 0:
                state[node] = 1
                path.append(node)
            children = graph.get(node, [])
            if index < len(children):
                stack.append((node, index + 1))
                nxt = children[index]
                if state.get(nxt) == 1:
                    cycle = [*path[path.index(nxt) :], nxt]
                    return [c or "root" for c in cycle]
                if not state.get(nxt):
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                path.pop()
    return None


def _check_openai_limits(e: Engine, out: dict[str, Any]) -> None:
    """Current documented limits (§2): refuse what cannot fit, drop the largest enums first."""
    state = e.state
    defs = out.get("$defs", {})
    total_props = state.get("properties", 0)
    if total_props > 5000:
        raise Refused(f"the schema has {total_props} properties; OpenAI strict mode allows at most 5,000")
    chars = state.get("chars", 0)
    enums: list[tuple[dict[str, Any], str]] = state.get("enums", [])
    total_values = 0
    for node, pointer in enums:
        values = node.get("enum", [])
        size = sum(len(str(v)) for v in values)
        if len(values) > 250 and all(isinstance(v, str) for v in values) and size > 15000:
            _drop_enum(e, node, pointer, f"{len(values)} string values of {size} characters exceed 15,000")
            continue
        total_values += len(values)
        chars += size
    if total_values > 1000:
        for node, pointer in sorted(enums, key=lambda item: -len(item[0].get("enum", []))):
            if total_values <= 1000:
                break
            values = node.get("enum")
            if values is None:
                continue
            total_values -= len(values)
            chars -= sum(len(str(v)) for v in values)
            _drop_enum(e, node, pointer, "the schema's enums exceed 1,000 values in total")
    if chars > 120_000:
        raise Refused(
            f"property names and enum values add up to {chars} characters; OpenAI strict mode allows 120,000"
        )
    # nesting cannot exceed the walk's own depth unless references lead into $defs
    if defs or e.deepest > 10:
        depth = _nesting_depth(out, defs if isinstance(defs, dict) else {})
        if depth > 10:
            raise Refused(f"the schema nests {depth} levels deep; OpenAI strict mode allows 10")
    for members in state.get("unions", []):
        _check_first_keys(members, defs if isinstance(defs, dict) else {})


def _check_first_keys(members: list[Any], defs: dict[str, Any]) -> None:
    """'Objects provided via anyOf must not share identical first keys.'"""
    firsts: list[str] = []
    for member in members:
        target = member
        if isinstance(member, dict) and isinstance(member.get("$ref"), str):
            name = member["$ref"].rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            target = defs.get(name)
        properties = target.get("properties") if isinstance(target, dict) else None
        if isinstance(properties, dict) and properties:
            first = next(iter(properties))
            if first in firsts:
                raise Refused(
                    f"two object members of one anyOf start with the same key {first!r}; OpenAI strict mode "
                    "refuses that ('Objects provided via anyOf must not share identical first keys')"
                )
            firsts.append(first)


def _drop_enum(e: Engine, node: dict[str, Any], pointer: str, why: str) -> None:
    node.pop("enum", None)
    if node.get("type") is None:
        node["type"] = "string"
    e.loss(pointer, "enum", "dropped", f"{why} (OpenAI strict mode limit)")


def _nesting_depth(out: dict[str, Any], defs: dict[str, Any]) -> int:
    """Object/array nesting levels, following references into `$defs` (a cycle adds nothing).
    Iterative: a chain of thousands of definitions must not recurse."""
    local: dict[str | None, tuple[int, list[tuple[int, str]]]] = {}
    for name, tree in [(None, out), *defs.items()]:
        deepest = 0
        refs: list[tuple[int, str]] = []
        stack: list[tuple[Any, int]] = [(tree, 0)]
        while stack:
            node, level = stack.pop()
            if not isinstance(node, dict) or (node is out and name is not None):
                continue
            deepest = max(deepest, level)
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
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
        local[name] = (deepest, refs)
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
                continue
            if name in total or name in on_path:
                continue
            on_path.add(name)
            work.append((name, True))
            work.extend((t, False) for _, t in local[name][1] if t not in total and t not in on_path)
    return total[None]
