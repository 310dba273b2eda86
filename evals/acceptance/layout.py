"""Where each provider mode carries a tool's name, description, schema and strict flag.

The checker judges the tool definition exactly as the provider's REST body carries it, so it
must know which field holds the schema: Gemini reads `parameters` (OpenAPI 3.0 subset) and
`parametersJsonSchema` (JSON Schema) by different rules, Anthropic reads `input_schema`, Chat
Completions nests everything under `function`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.acceptance._types import ProviderMode
from evals.acceptance.walk import to_pointer


@dataclass(frozen=True)
class ToolLayout:
    envelope: tuple[str, ...]
    """Keys from the definition's top to the object holding name/description/schema."""
    schema_field: str
    strict: bool | None
    """The `strict` flag this mode sends (None: the field is not sent)."""
    fixed: tuple[tuple[str, str], ...] = ()
    """Constant top-level members (`"type": "function"`)."""
    exclusive_fields: tuple[str, ...] = ()
    """Schema fields that must not appear beside `schema_field`."""
    schema_optional: bool = False
    """Whether a parameterless tool may omit the schema field altogether."""

    def pointer(self, *tokens: str) -> str:
        return to_pointer((*self.envelope, *tokens))


_FUNCTION = (("type", "function"),)

LAYOUTS: dict[ProviderMode, ToolLayout] = {
    "openai-chat": ToolLayout(("function",), "parameters", None, _FUNCTION),
    "openai-chat-strict": ToolLayout(("function",), "parameters", True, _FUNCTION),
    "openai-responses": ToolLayout((), "parameters", False, _FUNCTION),
    "openai-responses-strict": ToolLayout((), "parameters", True, _FUNCTION),
    "anthropic": ToolLayout((), "input_schema", None),
    "anthropic-strict": ToolLayout((), "input_schema", True),
    # Gemini wants `parameters` omitted, not empty, for a function without arguments
    # (docs/provider-schema-rules.md §6).
    "gemini-parameters": ToolLayout(
        (), "parameters", None, (), ("parametersJsonSchema",), schema_optional=True
    ),
    "gemini-json-schema": ToolLayout((), "parametersJsonSchema", None, (), ("parameters",)),
    "moonshot": ToolLayout(("function",), "parameters", None, _FUNCTION),
}


def mode_for(wire: str, dialect: str, strict: bool | None) -> ProviderMode:
    """The rule set that judges what an adapter sends: its wire, the provider its dialect names,
    and the strict flag its dialect puts on the tool.

    Responses without an explicit `strict: false` is judged as strict: the API normalises such
    tools to strict form when it can (docs/provider-schema-rules.md §3), so strict rules decide what
    reaches it.
    """
    if wire == "openai-chat":
        if dialect == "moonshot":
            return "moonshot"
        return "openai-chat-strict" if strict else "openai-chat"
    if wire == "openai-responses":
        return "openai-responses" if strict is False else "openai-responses-strict"
    if wire == "anthropic-messages":
        return "anthropic-strict" if strict else "anthropic"
    if wire == "google-genai":
        return "gemini-parameters" if dialect == "gemini-openapi" else "gemini-json-schema"
    raise ValueError(f"No acceptance rules for wire {wire!r}")


def build_definition(mode: ProviderMode, name: str, description: str, schema: Any) -> dict[str, Any]:
    """The tool definition as the mode's REST body carries it."""
    layout = LAYOUTS[mode]
    inner: dict[str, Any] = {"name": name, "description": description, layout.schema_field: schema}
    if layout.strict is not None:
        inner["strict"] = layout.strict
    definition: dict[str, Any] = inner
    for key in reversed(layout.envelope):
        definition = {key: definition}
    for key, value in layout.fixed:
        definition = {key: value, **definition}
    return definition


def inner_object(mode: ProviderMode, definition: Any) -> Any:
    """The object holding name/description/schema, or None when the envelope is not there."""
    current = definition
    for key in LAYOUTS[mode].envelope:
        if not isinstance(current, dict):
            return None
        current = current.get(key)
    return current if isinstance(current, dict) else None


def sent_schema(mode: ProviderMode, definition: Any) -> Any:
    """The schema a definition carries for `mode` (None when absent)."""
    inner = inner_object(mode, definition)
    return None if inner is None else inner.get(LAYOUTS[mode].schema_field)


_GOOGLE_FIELDS = {
    "parameters_json_schema": "parametersJsonSchema",
    "response_json_schema": "responseJsonSchema",
}


def definitions_in_request(wire: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool definitions in a wire's SDK call arguments, in the provider's REST shape.

    The OpenAI and Anthropic SDKs send their `tools` argument as is; google-genai takes
    snake_case declarations inside `config.tools[].function_declarations` and sends them
    camelCased (`parameters_json_schema` -> `parametersJsonSchema`).
    """
    if wire != "google-genai":
        tools = kwargs.get("tools")
        return [dict(t) for t in tools] if isinstance(tools, list) else []
    config: Any = kwargs.get("config")
    if hasattr(config, "model_dump"):
        config = config.model_dump(exclude_none=True)
    found: list[dict[str, Any]] = []
    for tool in (config or {}).get("tools") or []:
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump(exclude_none=True)
        for declaration in tool.get("function_declarations") or tool.get("functionDeclarations") or []:
            if hasattr(declaration, "model_dump"):
                declaration = declaration.model_dump(exclude_none=True)
            found.append({_GOOGLE_FIELDS.get(key, key): value for key, value in declaration.items()})
    return found
