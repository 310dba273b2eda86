"""Moonshot's validator, read at the level its server requires (`strict`): docs/provider-schema-rules.md §8.

A reading of the rules of Moonshot's published validator (walle, "Moonshot flavored JSON Schema")
at its `strict` level, the one walle's README (at the tree below) calls "the most permissive level
required by Moonshot AI server". walle stops at the first problem; so does `first_problem`. Paths
are kept twice: the JSON pointer tokens the checker reports, and walle's own path parts
(`anyOf{0}`), which walle resolves again from the root for some keywords (a property name with
braces in it resolves differently there).

What `strict` adds to `lite`: a node with several types and no `enum` carries nothing but
`type`, `description` and `title` (`MULTI_TYPE`), and the keyword names `required`,
`additionalProperties`, `anyOf`, `$defs` (and `$ref`, refused at `lite` too) are no property
names (`RESERVED_NAME`). Beyond `strict` (at walle's `ultra`) keywords MFJS does not support are
refused too; `strict` accepts them, so they are not problems here (the moonshot pass reports
them as not honoured).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from xpeval.evals.acceptance.checker._types import Rule

_VALID_TYPES = frozenset(("string", "number", "integer", "boolean", "null", "array", "object"))
_ANNOTATIONS = frozenset(("description", "title"))
MAX_ENUM_ITEMS = 1000
MAX_ENUM_STRING_LENGTH = 75_000
ENUM_STRING_CHECK_THRESHOLD = 2500
MAX_ANY_OF_ITEMS = 500
MAX_DEPTH = 30
MAX_SIZE = 120_000
MAX_PROPERTY_KEYS = 3000
_BUDGET = 200_000
"""Steps the reference checks may take before this reading gives up (and refuses)."""

SOURCE = "[lib] github.com/MoonshotAI/walle validator.go, keyword_validators.go (tree 196bb0ca, level strict)"

JSON_TEXT = Rule(
    "moonshot.json-text",
    "The schema is JSON walle can read: finite numbers within float64 range.",
    SOURCE + ' ("JSON schema parsing error")',
)
LIMITS = Rule(
    "moonshot.limits",
    f"At most {MAX_SIZE} bytes of compact JSON, {MAX_DEPTH} levels of nested properties, "
    f"{MAX_PROPERTY_KEYS} property keys in all, {MAX_ANY_OF_ITEMS} anyOf branches, {MAX_ENUM_ITEMS} enum "
    "values.",
    SOURCE + " (conf.go DefaultValidatorConfig)",
)
KEYWORD_VALUE = Rule(
    "moonshot.keyword-value",
    "Each keyword walle reads has the value's kind it expects (properties an object of schemas, "
    "items one schema, description a string, additionalProperties a boolean or a schema, ...).",
    SOURCE,
)
TYPE_VALUE = Rule(
    "moonshot.type-value",
    "type is one of the seven JSON Schema type names, or a non-empty array of them.",
    SOURCE,
)
REQUIRED_DEFINED = Rule(
    "moonshot.required-defined",
    "Every name in required is a key of the same node's properties.",
    SOURCE + " (\"required property 'x' is not defined in properties\")",
)
ENUM = Rule(
    "moonshot.enum",
    "An enum is a non-empty array whose values match the node's type (checked in the order the "
    "types are listed); with a type array, at most two types, one of them null.",
    SOURCE + ' ("enum value (x) does not match any type in [..]")',
)
TYPE_DEFINED = Rule(
    "moonshot.type-not-defined",
    "A node with an enum declares a type.",
    "[err] github.com/earendil-works/pi/issues/4138 (2026-05); " + SOURCE + ' ("type is not defined")',
)
ANY_OF_CONFLICT = Rule(
    "moonshot.any-of-conflict",
    "No keyword (but description and title) both on an anyOf parent and inside one of its branches.",
    SOURCE + ' ("conflicting keywords found in anyOf with parent")',
)
DEFS_NAMES = Rule(
    "moonshot.defs-names",
    "$defs is an object of schemas; no definition name is empty, no key inside a definition has '/'.",
    SOURCE + " (\"$defs property name 'x' cannot contain '/' character\")",
)
REF_CONTEXT = Rule(
    "moonshot.ref-context",
    "A $ref stands where walle allows one: a property, items, additionalProperties, an anyOf "
    "branch, or a top-level keyword.",
    SOURCE + ' ("$ref is not allowed in this schema.")',
)
REF_TERMINATION = Rule(
    "moonshot.ref-termination",
    "A reference can end: some required chain of the referenced schema reaches a scalar, an "
    "array without recursive items, an object with nothing required, or a terminating anyOf branch.",
    SOURCE + ' ("detected infinite recursion without termination condition")',
)
MULTI_TYPE = Rule(
    "moonshot.multi-type-keywords",
    "A node whose type lists several types and has no enum carries only type, description and title.",
    SOURCE + ' ("keyword x is not allowed in combination with multiple types")',
)
RESERVED_NAME = Rule(
    "moonshot.reserved-property-name",
    "No property is named required, additionalProperties, anyOf or $defs.",
    SOURCE + " (\"property name 'x' is reserved for JSON Schema keywords\")",
)
MULTI_TYPE_KEYWORDS = frozenset(("type", "description", "title"))
"""What walle-strict lets stand beside a type array of two or more types (and no enum)."""
RESERVED_PROPERTY_NAMES = ("required", "additionalProperties", "anyOf", "$defs")
"""Property names walle-strict refuses (`$ref` is refused at every level, as a reference)."""


@dataclass(frozen=True)
class Problem:
    """The first rule walle-strict would refuse the schema for."""

    rule: Rule | str
    """A rule of this module, or the id of one the moonshot profile defines."""
    tokens: tuple[str, ...]
    message: str
    keyword: str | None = None


class _Refused(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _refuse(rule: Rule | str, tokens: tuple[str, ...], message: str, keyword: str | None = None) -> _Refused:
    return _Refused(Problem(rule, tokens, message, keyword))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- the JSON text -------------------------------------------------------------------------------


def _json_problem(root: Any) -> Problem | None:
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while stack:
        value, tokens = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, (*tokens, str(k))) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*tokens, str(i))) for i, v in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            return Problem(JSON_TEXT, tokens, f"{value} is not a JSON number")
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 1.7e308:
            return Problem(JSON_TEXT, tokens, "number out of float64 range")
    return None


def _size(root: dict[str, Any]) -> int:
    text = json.dumps(root, separators=(",", ":"), ensure_ascii=False)
    # Go's encoder writes <, > and & as \u003c (six bytes)
    return len(text.encode()) + 5 * sum(text.count(c) for c in "<>&")


# --- one node ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _At:
    tokens: tuple[str, ...]
    """JSON pointer tokens from the schema root."""
    parts: tuple[str, ...]
    """walle's path parts (() is the root)."""

    def down(self, token: str, part: str | None = None) -> _At:
        return _At((*self.tokens, token), (*self.parts, token if part is None else part))


def _resolve_parts(root: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any] | None:
    """walle's `ResolveSubschema`: a part with braces is `list{index}`."""
    current: Any = root
    for part in parts:
        if "{" in part and "}" in part:
            base, _, rest = part.partition("{")
            index = rest.split("{")[0].removesuffix("}")
            if not index.lstrip("-").isdigit():
                return None
            items = current.get(base)
            if not isinstance(items, list) or not 0 <= int(index) < len(items):
                return None
            current = items[int(index)]
        else:
            current = current.get(part)
        if not isinstance(current, dict):
            return None
    return dict(current)


class _Strict:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, tuple[str, ...]] = {}
        self.property_keys = 0
        self.steps = 0
        self.depths: dict[str, int] = {}

    def step(self, tokens: tuple[str, ...]) -> None:
        self.steps += 1
        if self.steps > _BUDGET:
            raise _refuse(LIMITS, tokens, "too many reference expansions for this checker to follow")

    def parent(self, at: _At) -> dict[str, Any]:
        found = self.root if not at.parts else _resolve_parts(self.root, at.parts)
        if found is None:
            raise _refuse(KEYWORD_VALUE, at.tokens, "invalid path: " + ".".join(at.parts))
        return found

    # -- TraverseSchema --
    def traverse(self) -> int:
        deepest = 0
        stack: list[tuple[dict[str, Any], _At, int]] = [(self.root, _At((), ()), 0)]
        while stack:
            schema, at, depth = stack.pop()
            self.step(at.tokens)
            if depth > MAX_DEPTH:
                raise _refuse(LIMITS, at.tokens, f"schema depth exceeds maximum limit of {MAX_DEPTH}")
            deepest = max(deepest, depth)
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                deepest = max(deepest, depth + self.def_depth(ref))
            defs = schema.get("$defs")
            if isinstance(defs, dict):
                for name, sub in defs.items():
                    if not isinstance(sub, dict):
                        raise _refuse(
                            DEFS_NAMES, (*at.tokens, "$defs"), "$defs schema must be object", "$defs"
                        )
                    stack.append((sub, at.down("$defs").down(str(name)), depth))
            self.node(schema, at)
            stack.extend(self.children(schema, at, depth))
        return deepest

    def children(self, schema: dict[str, Any], at: _At, depth: int) -> list[tuple[dict[str, Any], _At, int]]:
        below: list[tuple[dict[str, Any], _At, int]] = []
        props = schema.get("properties")
        if isinstance(props, dict):
            self.property_keys += len(props)
            if self.property_keys > MAX_PROPERTY_KEYS:
                raise _refuse(LIMITS, at.tokens, f"more than {MAX_PROPERTY_KEYS} properties keys in all")
            here = at.down("properties")
            below.extend(
                (sub, here.down(str(k)), depth + 1) for k, sub in props.items() if isinstance(sub, dict)
            )
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                below.append((schema[key], at.down(key), depth))
        branches = schema.get("anyOf")
        if isinstance(branches, list):
            below.extend(
                (sub, _At((*at.tokens, "anyOf", str(i)), (*at.parts, f"anyOf{{{i}}}")), depth)
                for i, sub in enumerate(branches)
                if isinstance(sub, dict)
            )
        return below

    def node(self, schema: dict[str, Any], at: _At) -> None:
        if "type" in schema:
            if "anyOf" in schema:
                raise _refuse(
                    "moonshot.any-of-parent-type",
                    at.tokens,
                    "when using anyOf, type should be defined in anyOf items instead of the parent schema",
                    "type",
                )
            if "$ref" in schema:
                raise _refuse(
                    "moonshot.ref-with-type",
                    at.tokens,
                    "when using $ref, type should be defined in the referenced schema instead of the parent "
                    "schema",
                    "type",
                )
            _type_value(schema, at)
            _multi_type(schema, at)
        _keyword_values(schema, at)
        if "required" in schema:
            self._required(schema["required"], at)
        if "enum" in schema:
            self._enum(schema["enum"], at)
        if "$ref" in schema:
            self._ref(schema["$ref"], at)
        if "anyOf" in schema:
            self._any_of(schema["anyOf"], at)
        _any_of_conflicts(schema, at)

    def _required(self, value: Any, at: _At) -> None:
        tokens = (*at.tokens, "required")
        if not isinstance(value, list):
            raise _refuse(KEYWORD_VALUE, tokens, "required must be an array", "required")
        if any(not isinstance(name, str) for name in value):
            raise _refuse(KEYWORD_VALUE, tokens, "items in required array must be strings", "required")
        if not value:
            return
        props = self.parent(at).get("properties")
        for name in value:
            if not isinstance(props, dict) or name not in props:
                raise _refuse(
                    REQUIRED_DEFINED,
                    tokens,
                    f"required property '{name}' is not defined in properties",
                    "required",
                )

    def _enum(self, value: Any, at: _At) -> None:
        tokens = (*at.tokens, "enum")
        if not isinstance(value, list):
            raise _refuse(KEYWORD_VALUE, tokens, "enum must be an array", "enum")
        if not value:
            raise _refuse(ENUM, tokens, "enum array cannot be empty", "enum")
        if len(value) > MAX_ENUM_ITEMS:
            raise _refuse(LIMITS, tokens, f"enum array cannot have more than {MAX_ENUM_ITEMS} items", "enum")
        parent = self.parent(at)
        if "type" not in parent:
            raise _refuse(TYPE_DEFINED, at.tokens, "type is not defined", "type")
        _enum_values(value, parent["type"], at)

    def _ref(self, value: Any, at: _At) -> None:
        tokens = (*at.tokens, "$ref")
        if not isinstance(value, str):
            raise _refuse("moonshot.ref-must-be-string", tokens, "$ref must be a string", "$ref")
        if value != "#":
            if not value.startswith("#/$defs/"):
                raise _refuse("moonshot.ref-root-defs", tokens, "references must start with #/$defs/", "$ref")
            if value == "#/$defs/":
                raise _refuse("moonshot.ref-root-defs", tokens, "definition name cannot be empty", "$ref")
            if "$defs" not in self.root:
                raise _refuse(
                    "moonshot.ref-root-defs", tokens, f"$defs not found for reference: {value}", "$ref"
                )
            self.parent(at)
        self.refs.setdefault(value, tokens)

    def _any_of(self, value: Any, at: _At) -> None:
        tokens = (*at.tokens, "anyOf")
        if not isinstance(value, list):
            raise _refuse(KEYWORD_VALUE, tokens, "anyOf must be an array", "anyOf")
        if not 1 <= len(value) <= MAX_ANY_OF_ITEMS:
            raise _refuse(LIMITS, tokens, f"anyOf must have 1-{MAX_ANY_OF_ITEMS} items", "anyOf")
        if any(not isinstance(branch, dict) for branch in value):
            raise _refuse(KEYWORD_VALUE, tokens, "schema in anyOf must be an object", "anyOf")
        self.parent(at)

    # -- references --
    def resolve(self, ref: str, tokens: tuple[str, ...]) -> dict[str, Any]:
        if ref == "#":
            return self.root
        if not ref.startswith("#/$defs/"):
            raise _refuse("moonshot.ref-root-defs", tokens, "only local references are supported", "$ref")
        current: Any = self.root
        for part in ref[2:].split("/"):
            current = current.get(part) if isinstance(current, dict) else None
            if not isinstance(current, dict):
                raise _refuse("moonshot.ref-root-defs", tokens, f"invalid $ref path: {ref}", "$ref")
        return dict(current)

    def expand(self, schema: dict[str, Any], tokens: tuple[str, ...]) -> dict[str, Any]:
        """walle's `ExpandRef`: follow a chain of references that carry only annotations."""
        ref = schema["$ref"]
        if not isinstance(ref, str):
            raise _refuse("moonshot.ref-must-be-string", (*tokens, "$ref"), "$ref must be a string", "$ref")
        seen = {ref}
        current = self.resolve(ref, tokens)
        kept: dict[str, Any] = {}
        while "$ref" in current and current["$ref"] is not None:
            if any(k != "$ref" and k not in _ANNOTATIONS for k in current):
                break
            nxt = current["$ref"]
            if not isinstance(nxt, str):
                raise _refuse(
                    "moonshot.ref-must-be-string", (*tokens, "$ref"), "$ref must be a string", "$ref"
                )
            if nxt in seen:
                break
            seen.add(nxt)
            following = self.resolve(nxt, tokens)
            for k in _ANNOTATIONS & current.keys():
                kept.setdefault(k, current[k])
            current = following
        return {**current, **kept}

    def terminates(self, schema: dict[str, Any], seen: set[str], tokens: tuple[str, ...]) -> bool:
        """walle's `CheckRefTermination`."""
        self.step(tokens)
        declared = schema.get("type")
        kind = ""
        if isinstance(declared, str):
            if declared not in ("object", "array"):
                return True
            kind = declared
        elif isinstance(declared, list):
            for t in declared:
                if isinstance(t, str) and t not in ("object", "array"):
                    return True
                kind = t if isinstance(t, str) else kind
        if kind == "array" and self._array_ends(schema, seen, tokens):
            return True
        if kind == "object" and self._object_ends(schema, seen, tokens):
            return True
        branches = schema.get("anyOf")
        if isinstance(branches, list) and self._any_of_ends(branches, seen, tokens):
            return True
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return False
            seen.add(ref)
            return self.terminates(self.resolve(ref, tokens), seen, (*tokens, "$ref"))
        return not schema

    def _array_ends(self, schema: dict[str, Any], seen: set[str], tokens: tuple[str, ...]) -> bool:
        items = schema.get("items")
        if items is None or items == {}:
            return True
        return isinstance(items, dict) and self.terminates(items, seen, (*tokens, "items"))

    def _object_ends(self, schema: dict[str, Any], seen: set[str], tokens: tuple[str, ...]) -> bool:
        required = schema.get("required")
        props = schema.get("properties")
        if not required or not isinstance(props, dict) or not props:
            return True
        names = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
        for name, sub in props.items():
            if not isinstance(sub, dict):
                raise _refuse(
                    KEYWORD_VALUE, (*tokens, "properties", name), "property schema must be an object"
                )
            if name in names and self.terminates(sub, seen, (*tokens, "properties", name)):
                return True
        return False

    def _any_of_ends(self, branches: list[Any], seen: set[str], tokens: tuple[str, ...]) -> bool:
        if not branches:
            return True
        collected: set[str] = set()
        for i, branch in enumerate(branches):
            if not isinstance(branch, dict):
                raise _refuse(KEYWORD_VALUE, (*tokens, "anyOf"), "schema in anyOf must be an object", "anyOf")
            mine = set(seen)
            if self.terminates(branch, mine, (*tokens, "anyOf", str(i))):
                seen.update(mine)
                return True
            collected |= mine
        seen.update(collected)
        return False

    def def_depth(self, ref: str) -> int:
        if ref not in self.depths:
            self.depths[ref] = self.ref_depth(ref, frozenset())
        return self.depths[ref]

    def ref_depth(self, ref: str, seen: frozenset[str]) -> int:
        """walle's definition depth: nested `properties` levels below a reference, following refs."""
        try:
            target = self.resolve(ref, ())
        except _Refused:
            return 0
        return self._depth(target, seen | {ref})

    def _depth(self, schema: dict[str, Any], seen: frozenset[str]) -> int:
        self.step(())
        if not schema:
            return 0
        deepest = 0
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref not in seen:
            deepest = self.ref_depth(ref, seen)
        props = schema.get("properties")
        if isinstance(props, dict):
            deepest = max(
                deepest, 1, *(1 + self._depth(s, seen) for s in props.values() if isinstance(s, dict))
            )
        branches = schema.get("anyOf")
        for branch in branches if isinstance(branches, list) else ():
            if isinstance(branch, dict):
                deepest = max(deepest, self._depth(branch, seen))
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            deepest = max(deepest, self._depth(extra, seen))
        return deepest

    def check_refs(self) -> None:
        """walle's `PostValidateRefs`."""
        for ref, tokens in self.refs.items():
            self.resolve(ref, tokens)
        try:
            root_ends = self.terminates(self.root, set(), ())
        except _Refused:
            root_ends = False
        stack: list[tuple[dict[str, Any], _At, bool]] = [(self.root, _At((), ()), not root_ends)]
        while stack:
            schema, at, must_end = stack.pop()
            if "$ref" in schema:
                self.ref_node(schema, at, must_end)
            for key, value in schema.items():
                if key == "$defs":
                    continue
                if isinstance(value, dict):
                    ends = must_end and not (
                        key == "additionalProperties"
                        or (key == "properties" and schema.get("required") == [])
                    )
                    stack.append((value, at.down(str(key)), ends))
                elif key == "anyOf" and isinstance(value, list):
                    stack.extend(
                        (sub, _At((*at.tokens, "anyOf", str(i)), (*at.parts, f"anyOf{{{i}}}")), must_end)
                        for i, sub in enumerate(value)
                        if isinstance(sub, dict)
                    )

    def ref_node(self, schema: dict[str, Any], at: _At, must_end: bool) -> None:
        expanded = self.expand(schema, at.tokens)
        _ref_context(schema, expanded, at)
        if must_end and not self.terminates(expanded, set(), at.tokens):
            raise _refuse(
                REF_TERMINATION,
                at.tokens,
                "detected infinite recursion without termination condition",
                "$ref",
            )


def _type_value(schema: dict[str, Any], at: _At) -> None:
    declared = schema["type"]
    if isinstance(declared, list) and len(declared) > 1 and "enum" in schema:
        for t in declared:
            if t in ("object", "array"):
                raise _refuse(ENUM, at.tokens, f"type {t} is not allowed in combination with enum", "enum")
    if isinstance(declared, str):
        if declared not in _VALID_TYPES:
            raise _refuse(TYPE_VALUE, at.tokens, "invalid type", "type")
    elif isinstance(declared, list):
        if any(not isinstance(t, str) or t not in _VALID_TYPES for t in declared):
            raise _refuse(TYPE_VALUE, at.tokens, "invalid type in type array", "type")
        if not declared:
            raise _refuse(TYPE_VALUE, at.tokens, "type array cannot be empty", "type")
    else:
        raise _refuse(TYPE_VALUE, at.tokens, "type must be string or array of strings", "type")


_VALUE_KINDS: tuple[tuple[str, type | tuple[type, ...], str], ...] = (
    ("items", dict, "items must be an object"),
    ("description", str, "description must be a string"),
    ("additionalProperties", (bool, dict), "additionalProperties must be a boolean or an object"),
    ("$id", (str, type(None)), "$id must be a string"),
    ("pattern", (str, type(None)), "pattern must be a string"),
)


def _multi_type(schema: dict[str, Any], at: _At) -> None:
    declared = schema["type"]
    if not isinstance(declared, list) or len(declared) < 2 or "enum" in schema:
        return  # beside an enum, walle reads the type array by the enum's rules instead
    extra = sorted(set(schema) - MULTI_TYPE_KEYWORDS)
    if extra:
        raise _refuse(
            MULTI_TYPE,
            at.tokens,
            f"keyword {extra[0]} is not allowed in combination with multiple types",
            extra[0],
        )


def _keyword_values(schema: dict[str, Any], at: _At) -> None:
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise _refuse(KEYWORD_VALUE, (*at.tokens, "properties"), "properties must be an object", "properties")
    reserved = [name for name in RESERVED_PROPERTY_NAMES if name in props]
    if reserved:
        raise _refuse(
            RESERVED_NAME,
            (*at.tokens, "properties"),
            f"property name '{reserved[0]}' is reserved for JSON Schema keywords",
            "properties",
        )
    for name, sub in props.items():
        if not isinstance(sub, dict):
            raise _refuse(
                KEYWORD_VALUE,
                (*at.tokens, "properties", name),
                f"property schema for '{name}' must be an object",
            )
    for keyword, kinds, message in _VALUE_KINDS:
        if keyword in schema and not isinstance(schema[keyword], kinds):
            raise _refuse(KEYWORD_VALUE, (*at.tokens, keyword), message, keyword)
    if "$defs" in schema:
        _defs(schema["$defs"], (*at.tokens, "$defs"))


def _defs(defs: Any, tokens: tuple[str, ...]) -> None:
    if not isinstance(defs, dict):
        raise _refuse(DEFS_NAMES, tokens, "$defs must be an object", "$defs")
    for name, sub in defs.items():
        if not name or "/" in name:
            raise _refuse(
                DEFS_NAMES, tokens, f"$defs property name '{name}' cannot be empty or contain '/'", "$defs"
            )
        if not isinstance(sub, dict):
            raise _refuse(DEFS_NAMES, tokens, f"$defs schema must be object: {name}", "$defs")
        stack: list[tuple[dict[str, Any], tuple[str, ...]]] = [(sub, (*tokens, name))]
        while stack:
            current, here = stack.pop()
            for key, value in current.items():
                if "/" in key:
                    raise _refuse(
                        DEFS_NAMES, here, f"$defs property name '{key}' cannot contain '/' character"
                    )
                if isinstance(value, dict):
                    stack.append((value, (*here, key)))
                elif isinstance(value, list):
                    stack.extend(
                        (v, (*here, key, str(i))) for i, v in enumerate(value) if isinstance(v, dict)
                    )


def _enum_values(values: list[Any], declared: Any, at: _At) -> None:
    tokens = (*at.tokens, "enum")
    if isinstance(declared, str):
        types = [declared]
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        types = list(declared)
    else:
        raise _refuse(TYPE_VALUE, at.tokens, "invalid type value", "type")
    others = [t for t in types if t != "null"]
    if len(types) > 2 or (len(types) == 2 and len(others) != 1):
        raise _refuse(ENUM, at.tokens, "with enum, a type array has two types, one of them null", "enum")
    if len(types) == 2 and others[0] not in ("string", "integer", "number", "boolean"):
        raise _refuse(ENUM, at.tokens, f"invalid type combination with enum: {others[0]} + null", "enum")
    for value in values:
        if not any(_matches(value, t, tokens) for t in types):
            raise _refuse(ENUM, tokens, f"enum value ({value}) does not match any type in {types}", "enum")
    _enum_length(values, types, tokens)


def _enum_length(values: list[Any], types: list[str], tokens: tuple[str, ...]) -> None:
    if any(t in ("string", "number", "integer") for t in types) and len(values) > ENUM_STRING_CHECK_THRESHOLD:
        total = sum(
            len(v.encode()) if isinstance(v, str) else len(repr(v)) if _is_number(v) else 0 for v in values
        )
        if total > MAX_ENUM_STRING_LENGTH:
            raise _refuse(
                LIMITS, tokens, f"total string length of enum values ({total}) is over the limit", "enum"
            )


def _matches(value: Any, expected: str, tokens: tuple[str, ...]) -> bool:
    """walle's `IsTypeMatch`: a number type meeting a value that is no number is an error, not a miss."""
    if expected in ("number", "integer"):
        if not _is_number(value):
            raise _refuse(ENUM, tokens, f"not a valid {expected}", "enum")
        if expected == "integer" and math.floor(value) != value:
            raise _refuse(ENUM, tokens, "not a valid integer", "enum")
        return True
    kinds: dict[str, Any] = {"string": str, "boolean": bool, "array": list, "object": dict}
    if expected == "null":
        return value is None
    if expected in kinds:
        return isinstance(value, kinds[expected])
    raise _refuse(TYPE_VALUE, tokens, "invalid type", "type")


def _any_of_conflicts(schema: dict[str, Any], at: _At) -> None:
    branches = schema.get("anyOf")
    if not isinstance(branches, list):
        return
    outer = set(schema) - {"anyOf"}
    for branch in branches:
        shared = sorted((set(branch) & outer) - _ANNOTATIONS) if isinstance(branch, dict) else []
        if shared:
            raise _refuse(
                ANY_OF_CONFLICT,
                at.tokens,
                f"conflicting keywords found in anyOf with parent: keywords ({', '.join(shared)})",
                shared[0],
            )


def _ref_context(parent: dict[str, Any], expanded: dict[str, Any], at: _At) -> None:
    """walle's `CheckRefContext` (annotations may repeat at `strict`)."""
    mine = set(parent) - {"$ref"}
    shared = sorted((set(expanded) & mine) - _ANNOTATIONS)
    if shared:
        raise _refuse(
            "moonshot.ref-with-siblings",
            at.tokens,
            f"conflicting keywords found after $ref expansion: keywords ({', '.join(shared)}) are defined "
            'both alongside "$ref" and in the referenced schema',
            shared[0],
        )
    if ("type" in parent and "anyOf" in expanded) or ("type" in expanded and "anyOf" in parent):
        raise _refuse(
            "moonshot.any-of-parent-type", at.tokens, "invalid schema after $ref expansion", "anyOf"
        )
    for branch in expanded.get("anyOf", []) if isinstance(expanded.get("anyOf"), list) else []:
        shared = sorted((set(branch) & mine) - _ANNOTATIONS - {"anyOf"}) if isinstance(branch, dict) else []
        if shared:
            raise _refuse(
                ANY_OF_CONFLICT,
                at.tokens,
                "conflicting keywords found in anyOf after ref expansion",
                shared[0],
            )
    parts = at.parts or ("root",)
    last = parts[-1]
    if last in ("additionalProperties", "items") or last.startswith("anyOf") or len(parts) == 1:
        return
    if len(parts) >= 2 and parts[-2] == "properties":
        return
    raise _refuse(REF_CONTEXT, at.tokens, "$ref is not allowed in this schema.", "$ref")


def first_problem(root: Any) -> Problem | None:
    """The first thing walle at `strict` refuses in `root` (a tool's parameters), or None."""
    if not isinstance(root, dict):
        return Problem(JSON_TEXT, (), "the schema is not a JSON object")
    found = _json_problem(root)
    if found is not None or not root:
        return found
    if _size(root) > MAX_SIZE:
        return Problem(LIMITS, (), "schema exceeds maximum allowed size")
    strict = _Strict(root)
    try:
        if strict.traverse() > MAX_DEPTH:
            return Problem(LIMITS, (), f"schema depth exceeds maximum limit of {MAX_DEPTH}")
        strict.check_refs()
    except _Refused as refused:
        return refused.problem
    except RecursionError:
        return Problem(LIMITS, (), "too deeply nested for this checker to follow references")
    return None
