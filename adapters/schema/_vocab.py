"""JSON Schema 2020-12 keyword vocabulary, as the passes need to tell keywords apart.

A keyword is either a schema position (its value is a subschema, a map of them or a list of
them), an assertion (it changes which instances are valid), or an annotation (it does not).
Unknown keywords (`nullable`, `x-...`, `discriminator`) are annotations in 2020-12.
"""

from __future__ import annotations

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
TYPE_ORDER = ("string", "number", "integer", "boolean", "object", "array", "null")

SINGLE_SCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
MAP_SCHEMA = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"})
LIST_SCHEMA = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
SCHEMA_POSITIONS = SINGLE_SCHEMA | MAP_SCHEMA | LIST_SCHEMA
DEFS = frozenset({"$defs", "definitions"})

MIN_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
MAX_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)

OBJECT_KEYWORDS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    }
)
ARRAY_KEYWORDS = frozenset(
    {
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
        "additionalItems",
    }
)
STRING_KEYWORDS = frozenset({"minLength", "maxLength", "pattern"})
"""(`format` is not here: providers read it on numbers too, OpenAPI's int32 / int64 / float / double.)"""
NUMBER_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
TYPED_KEYWORDS: dict[str, frozenset[str]] = {
    "object": OBJECT_KEYWORDS,
    "array": ARRAY_KEYWORDS,
    "string": STRING_KEYWORDS,
    "number": NUMBER_KEYWORDS,
    "integer": NUMBER_KEYWORDS,
}
ALL_TYPED_KEYWORDS = OBJECT_KEYWORDS | ARRAY_KEYWORDS | STRING_KEYWORDS | NUMBER_KEYWORDS

ASSERTIONS = (
    frozenset(
        {"type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "format"}
    )
    | ALL_TYPED_KEYWORDS
)
"""Keywords that change which instances are valid (`format` counted: providers may enforce it)."""


def is_assertion(keyword: str) -> bool:
    return keyword in ASSERTIONS


def type_set(value: object) -> frozenset[str] | None:
    """The `type` keyword as a set (None when absent or malformed)."""
    if isinstance(value, str):
        return frozenset((value,))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None


def json_type_of(value: object) -> str:
    """The JSON type of a Python value decoded from JSON ("integer" for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def admits(types: frozenset[str], json_type: str) -> bool:
    """Whether a `type` set admits a value of `json_type` (integers are numbers)."""
    return json_type in types or (json_type == "integer" and "number" in types)
