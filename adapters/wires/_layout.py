"""Where a wire's request carries one tool definition: the facts the acceptance checker reads.

The checker (`evals/acceptance/checker`) judges a tool exactly as the provider's REST body carries it,
by its own reading of the providers' rules; it learns from the wire only where the parts are
(which member holds the schema, under which envelope, with which strict flag), never what is
allowed in them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from xpeval.adapters.contract import JsonObject

SchemaSemantics = Literal["json-schema", "openapi-3.0"]
"""How the provider reads the schema member: as JSON Schema, or as the OpenAPI 3.0 Schema subset
(Gemini's `parameters`, docs/provider-schema-rules.md §6), where an unchanged schema can still
mean something else."""


@dataclass(frozen=True)
class ToolLayout:
    """One tool definition as a wire's REST body carries it."""

    envelope: tuple[str, ...]
    """Keys from the definition's top to the object holding name/description/schema."""
    schema_field: str
    strict: bool | None
    """The `strict` flag sent (None: the member is not sent)."""
    fixed: tuple[tuple[str, str], ...] = ()
    """Constant top-level members (`"type": "function"`)."""
    exclusive_fields: tuple[str, ...] = ()
    """Schema members that must not appear beside `schema_field`."""
    schema_optional: bool = False
    """Whether a parameterless tool may omit the schema member altogether."""
    semantics: SchemaSemantics = "json-schema"

    def path(self, *tokens: str) -> tuple[str, ...]:
        """The keys from the definition's top to `tokens` inside the envelope."""
        return (*self.envelope, *tokens)

    def definition(self, name: str, description: str, schema: Any) -> JsonObject:
        """The tool definition in this layout (members in the order the wire sends them)."""
        inner: JsonObject = {"name": name, "description": description, self.schema_field: schema}
        if self.strict is not None:
            inner["strict"] = self.strict
        definition = inner
        for key in reversed(self.envelope):
            definition = {key: definition}
        for key, value in self.fixed:
            definition = {key: value, **definition}
        return definition

    def inner(self, definition: Any) -> JsonObject | None:
        """The object holding name/description/schema, or None when the envelope is not there."""
        current = definition
        for key in self.envelope:
            if not isinstance(current, dict):
                return None
            current = current.get(key)
        return current if isinstance(current, dict) else None

    def holds(self, definition: Any) -> bool:
        """Whether `definition` is laid out this way: its constant members and its envelope
        there (a layout with neither is told by its schema member)."""
        if not isinstance(definition, dict) or any(definition.get(k) != v for k, v in self.fixed):
            return False
        if not self.fixed and not self.envelope:
            return self.schema_field in definition
        node: Any = definition
        for key in self.envelope:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return True

    def schema(self, definition: Any) -> Any:
        """The schema a definition carries (None when absent)."""
        inner = self.inner(definition)
        return None if inner is None else inner.get(self.schema_field)


def listed_tools(kwargs: JsonObject) -> list[JsonObject]:
    """The `tools` argument of a Stainless SDK call (openai, anthropic): sent as it is."""
    tools = kwargs.get("tools")
    return [dict(t) for t in tools] if isinstance(tools, list) else []
