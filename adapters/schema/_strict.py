"""Strict modes: OpenAI Structured Outputs / strict tools and Anthropic strict tool use
(docs/provider-schema-rules.md §2, §3, §5).

Both compile the schema into a grammar, so every object is closed (`additionalProperties:
false`) and only a subset of keywords is allowed. What differs:

- OpenAI: every property is required; an optional one becomes required + nullable, and
  `PassResult.restore_arguments` turns the null the model sends for it back into "omitted".
  `default` is refused. Recursion is supported. Size limits: `_strict_limits`.
- Anthropic: optional properties stay optional (few of them: the grammar budget); `allOf`
  is supported; recursion is not; numeric, length and most array bounds are not enforced.

Unsupported scalar constraints are stated in the description (what the official SDK helpers
do) and reported as `moved-to-description`; unsupported subschemas are dropped and reported.
A free-form object (explicit `additionalProperties: true` or a schema, `patternProperties`, a
nested object without properties) cannot be expressed at all and is refused
(docs/provider-schema-rules.md §13.5); an implicitly open object is closed and reported as
`narrowed`.

`StrictRules.shape` runs one step per keyword family: the reference, combinators, the type,
object and array keywords, then the keywords the mode does not support.
"""

from __future__ import annotations

import enum
import re
from typing import Any, NamedTuple

from xpeval.adapters.schema import _pointer as P
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._first_keys import ORIGINS
from xpeval.adapters.schema._rules import Rules, copy_node, root_object
from xpeval.adapters.schema._steps import (
    accepts_null,
    add_description,
    drop_inapplicable,
    drop_keywords,
    families_used,
    format_constraints,
    inferred_type,
    narrow_to_type,
)
from xpeval.adapters.schema._strict_limits import check_openai_limits, find_cycle
from xpeval.adapters.schema._unions import one_of_as_any_of
from xpeval.adapters.schema._view import sibling_keywords
from xpeval.adapters.schema._vocab import SCHEMA_POSITIONS, TYPE_ORDER, TYPED_KEYWORDS, type_set
from xpeval.adapters.schema._walk import Layer, Layers, RefAction, RefMode, Refused, Task, View
from xpeval.adapters.schema._wellformed import check_common

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


class Extra(enum.StrEnum):
    """What an object's `additionalProperties` says (the value is how refusals name it)."""

    ABSENT = "absent"
    CLOSED = "closed"
    """`false`"""
    OPEN = "open"
    """`true` or `{}`"""
    SCHEMA = "schema"


def _extra(layers: Layers | None) -> Extra:
    if layers is None:
        return Extra.ABSENT
    nodes = [layer.node for layer in layers]
    if any(n is False for n in nodes):
        return Extra.CLOSED
    if all(n is True or n == {} for n in nodes):
        return Extra.OPEN
    return Extra.SCHEMA


class _ObjectKeys(NamedTuple):
    """The property names of an object node the way the mode sends them."""

    required: list[str]
    optional: list[str]
    """Properties the input does not require (OpenAI sends them required and nullable)."""


def _leaf_keywords(keep: frozenset[str]) -> dict[str, frozenset[str]]:
    """Per scalar type: the keywords a node may have to be copied unchanged (the fast path)."""
    general = frozenset({"type", "description", "title", "enum"}) & keep
    return {
        t: general | (TYPED_KEYWORDS.get(t, frozenset()) & keep) - {"format", "pattern"}
        for t in ("string", "integer", "number", "boolean", "null")
    }


class StrictRules(Rules):
    ref_mode = RefMode.DEFS
    refs_must_resolve = True
    resolve_root_unions = True
    inline_reason = "strict mode takes no assertions beside $ref"
    flatten_root_allof = True
    keep: frozenset[str] = frozenset()
    formats: frozenset[str] = frozenset()
    all_required = False
    leaf_keywords: dict[str, frozenset[str]] = {}

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> RefAction:
        siblings = sibling_keywords(layers, i)
        if not siblings:
            return RefAction.KEEP
        if siblings <= _ANNOTATION_SIBLINGS:
            return RefAction.WRAP
        return RefAction.INLINE

    def top(self, e: Engine) -> Any | None:
        return None

    def boolean(self, e: Engine, task: Task, layers: Layers) -> Any:
        where = P.to_str(layers[0].ptr) or "/"
        raise Refused(R.STRICT_TYPE, f"{self.label} cannot express the boolean schema at {where}")

    # ------------------------------------------------------------------ shape

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        check_common(e, view)
        leaf = self._leaf(e, view)
        if leaf is not None:
            return leaf
        if task.root:
            root_object(e, view)
        ref = view.kw.pop("$ref", None)
        if ref is not None and not view.kw:
            return {"$ref": e.ref_out(ref, task)}
        if "oneOf" in view.kw:
            one_of_as_any_of(e, view)
        self._ensure_type(e, view, task, ref)
        types = type_set(view.kw.get("type"))
        is_object = types is not None and "object" in types
        self._check_containers(e, view, task, types, is_object)
        drop_inapplicable(view, types)
        notes: dict[str, Any] = {}
        self._drop_unsupported(e, view, notes)
        keys = self._object_keys(view) if is_object else None
        out = self._emit(e, view, task, keys)
        if ref is not None:
            _beside_annotations(out, e.ref_out(ref, task))
        if keys is not None:
            self._close_object(e, task, out, keys)
        if notes:
            add_description(out, format_constraints(notes))
        self.after_shape(e, view, out)
        return out

    def _leaf(self, e: Engine, view: View) -> dict[str, Any] | None:
        """The common case: a scalar whose every keyword this mode keeps as it is."""
        kw = view.kw
        t = kw.get("type")
        leaf_ok = self.leaf_keywords.get(t) if type(t) is str else None
        if leaf_ok is None or not kw.keys() <= leaf_ok:
            return None
        leaf = dict(kw)
        self.after_shape(e, view, leaf)
        return leaf

    def after_shape(self, e: Engine, view: View, out: dict[str, Any]) -> None:
        """Per-dialect bookkeeping of the finished node."""

    # ------------------------------------------------------------------ type

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
            R.STRICT_TYPE,
            f"the schema at {P.to_str(view.ptr) or '/'} accepts any value; {self.label} needs a type on "
            "every node (an unconstrained value cannot be expressed)",
        )

    # ------------------------------------------------------------------ objects and arrays

    def _check_containers(
        self, e: Engine, view: View, task: Task, types: frozenset[str] | None, is_object: bool
    ) -> None:
        if is_object:
            self._check_object(e, view, task)
        if types is not None and "array" in types and "items" not in view.kw:
            raise Refused(
                R.STRICT_ARRAY_ITEMS,
                f"the array at {P.to_str(view.ptr) or '/'} has no items schema; {self.label} needs the "
                "element type",
            )

    def _check_object(self, e: Engine, view: View, task: Task) -> None:
        kw = view.kw
        extra = _extra(kw.get("additionalProperties"))
        if extra in (Extra.OPEN, Extra.SCHEMA) or "patternProperties" in kw:
            what = "patternProperties" if "patternProperties" in kw else f"additionalProperties ({extra})"
            raise Refused(
                R.STRICT_FREE_FORM,
                f"the object at {P.to_str(view.ptr) or '/'} is free-form ({what}); {self.label} closes "
                "every object, so it cannot be expressed (§13.5)",
            )
        if not kw.get("properties") and not task.root and extra is not Extra.CLOSED:
            raise Refused(
                R.STRICT_FREE_FORM,
                f"the object at {P.to_str(view.ptr) or '/'} declares no properties (a free-form object); "
                f"{self.label} closes every object, so it cannot be expressed (§13.5)",
            )
        if extra is Extra.ABSENT:
            e.closed.append(e.out_pointer(task.out_ptr))
            e.loss(
                P.join(P.to_str(view.ptr), "additionalProperties"),
                "additionalProperties",
                "narrowed",
                f"open object closed ({self.label} requires additionalProperties: false): undeclared keys "
                "can no longer be sent",
                # the schema left it open without saying so: what the model is told changes
                "guidance",
            )

    def _object_keys(self, view: View) -> _ObjectKeys:
        kw = view.kw
        props = kw.get("properties", {})
        required = kw.get("required", [])
        missing = [r for r in required if r not in props]
        if missing:
            raise Refused(
                R.STRICT_REQUIRED_UNDECLARED,
                f"required lists {missing} at {view.at('required')} without a schema in properties; "
                f"{self.label} closes every object, so such a key could never be sent",
            )
        optional = [name for name in props if name not in required]
        return _ObjectKeys(list(props) if self.all_required else list(required), optional)

    def _emit(self, e: Engine, view: View, task: Task, keys: _ObjectKeys | None) -> dict[str, Any]:
        """The output node, in the view's keyword order, its subschemas pushed as tasks."""
        out: dict[str, Any] = {}
        for key, value in view.kw.items():
            if key == "additionalProperties":
                continue  # written by `_close_object`
            if keys is not None and key == "properties":
                self._push_properties(e, task, out, value, keys)
            elif keys is not None and key == "required":
                out[key] = keys.required
            elif key in SCHEMA_POSITIONS:
                copy_node(e, view, task, out, only=key)
            else:
                out[key] = value
        return out

    def _push_properties(
        self, e: Engine, task: Task, out: dict[str, Any], value: dict[str, Layers], keys: _ObjectKeys
    ) -> None:
        slot: dict[str, Any] = {}
        out["properties"] = slot
        base = (task.out_ptr, "properties")
        for name, layers in value.items():
            slot[name] = None
            nullable = self.all_required and name in keys.optional
            e.push(layers, task, slot, name, (base, name), nullable=nullable)

    def _close_object(self, e: Engine, task: Task, out: dict[str, Any], keys: _ObjectKeys) -> None:
        out.setdefault("properties", {})
        if self.all_required or "required" in out or keys.required:
            out["required"] = keys.required
        out["additionalProperties"] = False
        if self.all_required and keys.optional:
            e.made_required[e.out_pointer(task.out_ptr)] = keys.optional

    # ------------------------------------------------------------------ unsupported keywords

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
            reason = f"{self.label} does not support this keyword"
            drop_keywords(e, view, unsupported, reason=reason, to_description=notes)
        if "enum" in kw and not all(v is None or isinstance(v, (str, int, float, bool)) for v in kw["enum"]):
            kw.pop("enum")
            e.loss(
                view.at("enum"), "enum", "dropped", f"{self.label} supports enums of primitive values only"
            )

    def drop_dialect_specific(self, e: Engine, view: View, notes: dict[str, Any]) -> None:
        """Keywords a dialect supports only with some values."""


def _beside_annotations(out: dict[str, Any], ref: str) -> None:
    """Annotation siblings beside a reference: the reference moves into a one-member `anyOf`,
    which strict mode allows siblings of (and which means the same)."""
    wrapper = {"$ref": ref}
    if "anyOf" in out:
        out.setdefault("allOf", []).append(wrapper)  # pragma: no cover - anyOf + $ref + annotations
    else:
        out["anyOf"] = [wrapper]


class OpenAIStrictRules(StrictRules):
    name = "openai-strict"
    label = "OpenAI strict mode"
    keep = _OPENAI_KEEP
    formats = _OPENAI_FORMATS
    leaf_keywords = _leaf_keywords(_OPENAI_KEEP)
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
            # where a union member's properties came from, should `_first_keys` reorder them
            state.setdefault(ORIGINS, {})[id(out)] = view.origin("properties")
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
        parent = task.out_ptr[0][0]
        if _already_nullable(task, out):
            e.loss(
                P.to_str(task.layers[0].ptr),
                "required",
                "relaxed",
                "optional property made required (OpenAI strict mode): it was nullable already, so the model "
                "sends null to omit it and an explicit null can no longer be told from an omission",
                "guidance",
            )
            return out
        e.made_nullable.setdefault(e.out_pointer(parent), []).append(task.key)
        return _or_null(out)

    def finish(self, e: Engine, out: dict[str, Any]) -> None:
        check_openai_limits(e, out)


def _already_nullable(task: Task, out: Any) -> bool:
    # The output's combinator members are still being built here: ask the input too.
    input_nodes = [layer.node for layer in task.layers if layer.node is not True]
    return accepts_null(out) or bool(input_nodes and all(accepts_null(node) for node in input_nodes))


def _or_null(out: Any) -> Any:
    """`out`, or null: in place where the node can say it (a type list, an anyOf member)."""
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


class AnthropicStrictRules(StrictRules):
    name = "anthropic-strict"
    label = "Anthropic strict tool use"
    keep = _ANTHROPIC_KEEP
    formats = _ANTHROPIC_FORMATS
    # (enum members must be primitive here, which the full path checks)
    leaf_keywords = _leaf_keywords(_ANTHROPIC_KEEP - {"enum"})

    def ref_action(self, e: Engine, task: Task, layers: list[Layer], i: int) -> RefAction:
        action = super().ref_action(e, task, layers, i)
        return RefAction.INLINE if action is RefAction.WRAP else action

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
        cycle = find_cycle(e.def_edges)
        if cycle:
            raise Refused(
                R.ANTHROPIC_STRICT_RECURSION,
                f"the schema is recursive ({' -> '.join(cycle)}); Anthropic strict tool use does not support "
                "recursive schemas",
            )
