"""The top level of a tool's argument schema: which arguments exist and which are required.

Scoring and case validation judge argument names against the root object of the schema. A
root that is a local `$ref` (pydantic emits `{"$ref": "#/$defs/Model", "$defs": ...}`) is
followed to its target unless the node declares its own `properties`; an unresolvable or
cyclic root reference counts as an object with no declared arguments rather than an error,
so bad schemas never crash a run.
"""

from __future__ import annotations

from typing import Any

from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

_MAX_REF_HOPS = 32
_BASE_URI = "urn:xpeval:tool-parameters"


def root_object(schema: Any) -> dict[str, Any]:
    """The schema node that describes the arguments object, after following root `$ref`s."""
    if not isinstance(schema, dict):
        return {}
    if "properties" in schema or not isinstance(schema.get("$ref"), str):
        return schema  # no root reference to follow (most schemas): no registry built
    resolver = Registry().with_resource(_BASE_URI, DRAFT202012.create_resource(schema)).resolver(_BASE_URI)
    node: Any = schema
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(node, dict):
            return {}
        ref = node.get("$ref")
        if "properties" in node or not isinstance(ref, str):
            return node
        try:
            node = resolver.lookup(ref).contents
        except Unresolvable:
            return {}
    return {}


def root_properties(schema: Any) -> dict[str, Any]:
    """Argument name -> its schema, as declared at the root (empty when none are declared)."""
    properties = root_object(schema).get("properties")
    return properties if isinstance(properties, dict) else {}


def root_required(schema: Any) -> list[str]:
    """The required argument names declared at the root (only string entries count)."""
    required = root_object(schema).get("required")
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []
