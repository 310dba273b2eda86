"""What a Gemini `parameters` (OpenAPI 3.0 subset) schema means, written as JSON Schema.

The subset spells two things differently from JSON Schema: `nullable: true` (null is allowed as
well) and upper-case type names (`STRING`). To validate instances against the output of the
`gemini-openapi` pass, or against a recorded Gemini `parameters` schema, with a JSON Schema
validator, convert it first. The one converter: the fidelity measure and the tests use it.
Iterative (any depth), pure.
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema._vocab import SINGLE_SCHEMA, type_set


def as_json_schema(schema: Any) -> Any:
    """`schema` with lower-case type names and every `nullable: true` node turned into "the node,
    or null"."""
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(schema, holder, 0)]
    while stack:
        node, parent, key = stack.pop()
        if not isinstance(node, dict):
            parent[key] = node
            continue
        out: dict[str, Any] = {}
        nullable = node.get("nullable") is True
        for name, value in node.items():
            if name == "nullable":
                continue
            if name == "type" and isinstance(value, str):
                value = value.lower()
            if name == "properties" and isinstance(value, dict):
                slot: dict[str, Any] = {}
                out[name] = slot
                for prop, sub in value.items():
                    stack.append((sub, slot, prop))
            elif name == "anyOf" and isinstance(value, list):
                members: list[Any] = [None] * len(value)
                out[name] = members
                for index, sub in enumerate(value):
                    stack.append((sub, members, index))
            elif name in SINGLE_SCHEMA and isinstance(value, dict):
                stack.append((value, out, name))
            else:
                out[name] = value
        if nullable:
            types = type_set(out.get("type"))
            if types is not None and "enum" not in out and "anyOf" not in out:
                out["type"] = [*sorted(types), "null"] if "null" not in types else out["type"]
            else:
                out = {"anyOf": [out, {"type": "null"}]}
                # children still being filled write into the inner dict, which is kept by reference
        parent[key] = out
    return holder[0]
