"""What the moonshot pass does so that Moonshot's validator (MFJS, docs/provider-schema-rules.md §8)
takes its output, and what it reports the provider does not honour.

Written apart from the checker's reading of the same validator (the checker judges the output).

- An `enum` keeps only the values of the node's types (the others can never validate: exact), lists
  `null` first in a two-type array of a number type with `null` among its values (the validator
  checks the types in order, and a number type meeting `null` is an error), and a node of several
  types with an enum the validator cannot take beside a type array becomes one member per type. An
  enum no value of which has the node's type admits nothing: refused.
- A `required` name without a property schema gets one: the `additionalProperties` schema, or any
  value (exact); beside `additionalProperties: false` no value is allowed, and the name is dropped.
- A `description` or `$id` that is not a string is dropped.
- Keywords MFJS does not support are kept (the model reads them) and reported: the provider does
  not honour them. A `const` of a string or number becomes a one-value `enum` (exact).
- Over the whole output: no keyword both on an `anyOf` parent and in one of its branches, every
  reference can end, every number is finite; otherwise refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._walk import Refused, Task, View

UNSUPPORTED = (
    "const",
    "pattern",
    "format",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "minContains",
    "maxContains",
    "dependentRequired",
    "contentEncoding",
    "contentMediaType",
    "discriminator",
    "optional",
)
"""The constraint keywords MFJS does not support (its comparison with draft 2020-12, quoted in
docs/provider-schema-rules.md §8) that take a value, and OpenAPI's `discriminator` and the
non-standard `optional` (walle-strict lets them pass; `ultra` refuses them): kept, reported.
`oneOf`, `allOf` and `prefixItems` are rewritten before."""
UNSUPPORTED_SCHEMAS = (
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "patternProperties",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
"""Those that take subschemas: dropped, reported (walle does not read them, and refuses a
`$ref` in them)."""
NOT_HONOURED = "not honoured by the provider: Moonshot's schema dialect (MFJS) does not support it"
MAX_ENUM = 1000
_ENUM_PAIRS = frozenset(("string", "integer", "number", "boolean"))
_ANNOTATIONS = frozenset(("description", "title"))
_MAX_STEPS = 100_000


def _has_type(value: Any, t: str) -> bool:
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if t == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if t == "number":
        return isinstance(value, (int, float)) and math.isfinite(value)
    kinds: dict[str, type] = {"string": str, "array": list, "object": dict}
    return isinstance(value, kinds.get(t, type(None))) and t in kinds


def const_as_enum(e: Engine, view: View) -> None:
    """A `const` of a string or number is a one-value `enum`, which MFJS has (exact)."""
    kw = view.kw
    if "const" in kw and "enum" not in kw and isinstance(kw["const"], (str, int, float)):
        kw["enum"] = [kw.pop("const")]
        e.loss(view.at("const"), "const", "renamed", "sent as a one-value enum (exact)")


def report_unsupported(e: Engine, view: View) -> None:
    """Every unsupported constraint reported (those taking subschemas dropped)."""
    kw = view.kw
    for keyword in UNSUPPORTED:
        if keyword in kw:
            e.loss(view.at(keyword), keyword, "relaxed", NOT_HONOURED)
    for keyword in UNSUPPORTED_SCHEMAS:
        if keyword in kw:
            del kw[keyword]
            e.loss(view.at(keyword), keyword, "dropped", NOT_HONOURED)


def drop_bad_annotations(e: Engine, view: View) -> None:
    for keyword in ("description", "$id"):
        if keyword in view.kw and not isinstance(view.kw[keyword], str):
            del view.kw[keyword]
            e.loss(view.at(keyword), keyword, "dropped", f"{keyword} must be a string for Moonshot")


def fit_enum(view: View, types: frozenset[str]) -> list[str] | None:
    """Make the node's enum one Moonshot takes; the types to split the node into when one node
    cannot carry it (None: it can)."""
    kw = view.kw
    values = kw.get("enum")
    if not isinstance(values, list):
        return None
    declared = kw.get("type")
    ordered = [declared] if isinstance(declared, str) else [t for t in declared or [] if t in types]
    kept_types = [t for t in ordered if any(_has_type(v, t) for v in values)]
    if not kept_types:
        raise Refused(
            R.MOONSHOT_ENUM,
            f"no value of the enum at {view.at('enum')} has the node's type: it admits nothing",
        )
    kw["enum"] = [v for v in values if any(_has_type(v, t) for t in kept_types)]
    if len(kept_types) == 1:
        kw["type"] = kept_types[0]
        return None
    paired = _nullable_pair(kept_types, kw["enum"])
    if paired is None:
        return kept_types
    kw["type"] = paired
    return None


def _nullable_pair(types: list[str], values: list[Any]) -> list[str] | None:
    """The type array walle takes beside an enum (one type and null), or None."""
    others = [t for t in types if t != "null"]
    if len(types) != 2 or len(others) != 1 or others[0] not in _ENUM_PAIRS:
        return None
    if others[0] in ("number", "integer") and None in values:
        return ["null", others[0]]  # a number type meeting null first is an error
    return types


def check_enum_size(e: Engine, view: View) -> None:
    values = view.kw.get("enum")
    if isinstance(values, list) and not values:
        raise Refused(R.MOONSHOT_ENUM, f"the enum at {view.at('enum')} is empty: it admits nothing")
    if isinstance(values, list) and len(values) > MAX_ENUM:
        del view.kw["enum"]
        e.loss(view.at("enum"), "enum", "dropped", f"Moonshot takes at most {MAX_ENUM} enum values")


def declare_required(e: Engine, view: View, task: Task, out: dict[str, Any], top: Callable[[], Any]) -> None:
    """Give every required name a property schema (MFJS wants each one declared)."""
    required = out.get("required")
    props = out.get("properties")
    if not isinstance(required, list) or not isinstance(props, dict):
        return
    missing = [name for name in required if name not in props]
    if not missing:
        return
    extra = view.kw.get("additionalProperties")
    nodes = [layer.node for layer in extra] if isinstance(extra, tuple) else []
    if any(node is False for node in nodes):
        out["required"] = [name for name in required if name in props]
        e.loss(
            view.at("required"),
            "required",
            "dropped",
            f"{', '.join(missing)} required but not allowed (additionalProperties: false): dropped",
        )
        return
    for name in missing:
        if extra is None or all(node is True for node in nodes):
            props[name] = top()
        else:
            props[name] = None
            e.push(extra, task, props, name, ((task.out_ptr, "properties"), name))


# --- over the whole output -------------------------------------------------------------------------


def _nodes(root: dict[str, Any], root_ends: bool) -> list[tuple[dict[str, Any], str, bool]]:
    """Every output node outside `$defs`, with its place and whether its references must end
    (not once the root can end, nor below an optional-only object or `additionalProperties`)."""
    found: list[tuple[dict[str, Any], str, bool]] = []
    stack: list[tuple[Any, str, bool]] = [(root, "", not root_ends)]
    while stack:
        node, at, must_end = stack.pop()
        if not isinstance(node, dict):
            continue
        found.append((node, at, must_end))
        if isinstance(node.get("properties"), dict):
            below = must_end and node.get("required") != []
            stack.extend((sub, f"{at}/properties/{name}", below) for name, sub in node["properties"].items())
        stack.append((node.get("items"), f"{at}/items", must_end))
        stack.append((node.get("additionalProperties"), f"{at}/additionalProperties", False))
        if isinstance(node.get("anyOf"), list):
            stack.extend((sub, f"{at}/anyOf/{i}", must_end) for i, sub in enumerate(node["anyOf"]))
    return found


def _finite(root: Any) -> None:
    stack = [root]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, float) and not math.isfinite(value):
            raise Refused(
                R.NOT_JSON_SCHEMA, f"{value} is not a JSON number: the schema cannot be sent as JSON"
            )


class _Ends:
    """Whether a reference can end: some value of the referenced schema is finite (the reading of
    Moonshot's recursion rule: a required chain must reach a scalar, an array that may be empty of
    recursion, an object with nothing required, or a branch that ends)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.steps = 0

    def target(self, ref: str) -> Any:
        node: Any = self.root
        for token in ref[2:].split("/") if ref != "#" else ():
            node = node.get(token) if isinstance(node, dict) else None
        return node

    def ends(self, node: Any, open_refs: frozenset[str]) -> bool:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise Refused(R.MOONSHOT_REF_ENDS, "too many references to follow to know whether each one ends")
        if not isinstance(node, dict) or not node:
            return True
        types = node.get("type")
        names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
        if any(t not in ("object", "array") for t in names):
            return True
        if "array" in names and self._array_ends(node, open_refs):
            return True
        if "object" in names and self._object_ends(node, open_refs):
            return True
        branches = node.get("anyOf")
        if isinstance(branches, list) and any(self.ends(b, open_refs) for b in branches):
            return True
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in open_refs:
                return False
            return self.ends(self.target(ref), open_refs | {ref})
        return False

    def _array_ends(self, node: dict[str, Any], open_refs: frozenset[str]) -> bool:
        items = node.get("items")
        return items is None or items == {} or self.ends(items, open_refs)

    def _object_ends(self, node: dict[str, Any], open_refs: frozenset[str]) -> bool:
        required = node.get("required")
        props = node.get("properties")
        if not required or not isinstance(props, dict) or not props:
            return True
        return any(self.ends(props[name], open_refs) for name in required if name in props)


def check_output(out: dict[str, Any]) -> None:
    """Refuse an output Moonshot's validator would refuse as a whole."""
    _finite(out)
    ends = _Ends(out)
    for node, at, must_end in _nodes(out, ends.ends(out, frozenset())):
        branches = node.get("anyOf")
        if isinstance(branches, list):
            outer = set(node) - {"anyOf"} - _ANNOTATIONS
            for branch in branches:
                shared = sorted(outer & set(branch)) if isinstance(branch, dict) else []
                if shared:
                    raise Refused(
                        R.MOONSHOT_ANY_OF_PARENT,
                        f"{', '.join(shared)} both on the anyOf parent at {at or '/'} and in a branch: "
                        "Moonshot refuses it",
                    )
        ref = node.get("$ref")
        if must_end and isinstance(ref, str) and not ends.ends(node, frozenset()):
            raise Refused(
                R.MOONSHOT_REF_ENDS,
                f"the reference at {at or '/'} never ends (a required chain back to itself)",
            )
