"""Hypothesis strategies for arbitrary tool-parameter JSON Schemas.

They cover what the dialect passes must survive: `$defs` with references (also recursive and
with sibling keywords), `definitions`, combinators, type arrays, enums and consts, bounds,
formats and patterns, open and closed objects, and untyped nodes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PROPERTY_NAMES = st.sampled_from(["a", "b", "c", "name", "id"])
DEF_NAMES = ("D0", "D1")


def _strings() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(3, 8),
            "pattern": st.sampled_from(["^[a-z]*$", "^x", "(?<=a)b"]),
            "format": st.sampled_from(["date", "email", "uuid", "uri"]),
            "enum": st.lists(st.sampled_from(["x", "y", "zz"]), min_size=1, max_size=3, unique=True),
            "description": st.just("a string"),
            "default": st.just("x"),
        },
    )


def _numbers() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(-5, 0),
            "maximum": st.integers(1, 9),
            "exclusiveMinimum": st.sampled_from([-3, 0, 0.5]),
            "exclusiveMaximum": st.sampled_from([5, 7.5]),
            "multipleOf": st.sampled_from([1, 2, 0.5]),
            "default": st.just(1),
        },
    )


def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        _strings(),
        _numbers(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.sampled_from(
            [
                {"type": ["string", "null"]},
                {"type": ["integer", "string"], "minLength": 1, "minimum": 2},
                {"type": ["string", "null"], "enum": ["a", "b"]},
                {"enum": ["a", 1, None]},
                {"enum": [1, 2, 3]},
                {"const": "fixed"},
                {"const": 3},
                {},
                {"description": "anything"},
                True,
            ]
        ),
    )


def _refs() -> st.SearchStrategy[dict[str, Any]]:
    target = st.sampled_from([*(f"#/$defs/{n}" for n in DEF_NAMES), "#/definitions/Old", "#/$defs/Missing"])
    return st.one_of(
        st.builds(lambda r: {"$ref": r}, target),
        st.builds(
            lambda r, extra: {"$ref": r, **extra},
            target,
            st.sampled_from(
                [
                    {"description": "sibling"},
                    {"default": None},
                    {"minLength": 2},
                    {"type": "object", "properties": {"extra": {"type": "integer"}}, "required": ["extra"]},
                    {"maxLength": 20},
                ]
            ),
        ),
    )


def _extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    members = st.lists(inner, min_size=1, max_size=2)
    return st.one_of(
        _objects(inner),
        st.builds(lambda items, bounds: {"type": "array", "items": items, **bounds}, inner, _ARRAY_BOUNDS),
        st.builds(lambda m: {"anyOf": m}, members),
        st.builds(lambda m: {"oneOf": m}, members),
        st.builds(lambda m: {"allOf": m}, members),
        st.builds(lambda m: {"type": "object", "anyOf": m}, members),
        st.builds(lambda s: {"not": s}, inner),
        st.builds(lambda s: {"type": ["array", "null"], "items": s}, inner),
    )


_ARRAY_BOUNDS = st.sampled_from([{}, {"minItems": 1}, {"maxItems": 3}, {"minItems": 2, "uniqueItems": True}])
_EXTRA = st.sampled_from(
    [
        {},
        {"additionalProperties": False},
        {"additionalProperties": True},
        {"additionalProperties": {"type": "string"}},
        {"description": "an object"},
    ]
)


@st.composite
def _object_schema(draw: Any, inner: st.SearchStrategy[Any]) -> dict[str, Any]:
    props = draw(st.dictionaries(PROPERTY_NAMES, inner, max_size=3))
    node: dict[str, Any] = {"type": "object", "properties": props}
    names = sorted(props)
    if names:
        node["required"] = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    node.update(draw(_EXTRA))
    return node


def _objects(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return _object_schema(inner)


_SUBSCHEMAS = st.recursive(st.one_of(_scalars(), _refs()), _extend, max_leaves=4)
_DEFINITION = st.one_of(st.just({"type": "string", "maxLength": 5}), _SUBSCHEMAS)


@st.composite
def tool_schemas(draw: Any) -> dict[str, Any]:
    """A tool's parameters: an object root, with `$defs` its references may point into."""
    props = draw(st.dictionaries(PROPERTY_NAMES, _SUBSCHEMAS, min_size=1, max_size=3))
    root: dict[str, Any] = {"type": "object", "properties": props}
    names = sorted(props)
    required = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    if required:
        root["required"] = required
    if draw(st.booleans()):
        root["additionalProperties"] = False
    root["$defs"] = {name: draw(_SUBSCHEMAS) for name in DEF_NAMES}
    root["definitions"] = {"Old": draw(_DEFINITION)}
    return root


def _lean_extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    members = st.lists(inner, min_size=1, max_size=2)
    return st.one_of(
        _objects(inner),
        st.builds(lambda items, bounds: {"type": "array", "items": items, **bounds}, inner, _ARRAY_BOUNDS),
        st.builds(lambda m: {"anyOf": m}, members),
        st.builds(lambda m: {"oneOf": m}, members),
        st.builds(lambda s: {"allOf": [s]}, inner),
        st.builds(lambda s: {"type": ["array", "null"], "items": s}, inner),
    )


_LEAN_LEAVES = st.one_of(_scalars(), _refs().filter(lambda r: r["$ref"] != "#/$defs/Missing"))
_LEAN = st.recursive(_LEAN_LEAVES, _lean_extend, max_leaves=3)
_LEAN_DEFS = st.recursive(_scalars(), _lean_extend, max_leaves=2)


@st.composite
def lean_tool_schemas(draw: Any) -> dict[str, Any]:
    """Tool schemas hypothesis-jsonschema generates instances for quickly: references into
    non-recursive `$defs`, no `not`, small combinators."""
    props = draw(st.dictionaries(PROPERTY_NAMES, _LEAN, min_size=1, max_size=3))
    root: dict[str, Any] = {"type": "object", "properties": props}
    names = sorted(props)
    required = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    if required:
        root["required"] = required
    if draw(st.booleans()):
        root["additionalProperties"] = False
    root["$defs"] = {name: draw(_LEAN_DEFS) for name in DEF_NAMES}
    root["definitions"] = {"Old": {"type": "string", "maxLength": 5}}
    return root


_TUPLES = st.lists(_SUBSCHEMAS, min_size=1, max_size=2).flatmap(
    lambda m: st.sampled_from(
        [
            # tuple[int, str] as pydantic writes it (`prefixItems`, no `items`), closed or not
            {"type": "array", "prefixItems": m, "minItems": len(m), "maxItems": len(m)},
            {"type": "array", "prefixItems": m},
        ]
    )
)
_AWKWARD = st.sampled_from(
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "undeclared"]},
        {"type": ["integer", "null"], "enum": [1, None]},
        {"type": "array", "enum": ["not an array"]},
    ]
)


@st.composite
def sent_tool_schemas(draw: Any) -> dict[str, Any]:
    """`tool_schemas` with shapes whose rewrite providers are picky about (tuples, required names
    without a property, enums against their type), for what is sent, not for what it means: the
    instance generator does not read `prefixItems`."""
    root = draw(tool_schemas())
    root["properties"]["t"] = draw(st.one_of(_TUPLES, _AWKWARD))
    return root
