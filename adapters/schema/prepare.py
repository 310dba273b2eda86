"""Apply a dialect to every tool of a request: schemas rewritten, names mapped, limits checked.

Per-request limits (docs/provider-schema-rules.md §13.8, §5): OpenAI takes at most 128 tools
(Moonshot rides the same wire), Gemini 512; Anthropic strict compiles all strict tools into one
grammar, with reported ceilings of about 20 strict tools and 24 optional properties in total. Tools past a
limit are refused with the reason (the adapter then refuses the turn instead of sending it).
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.contract import ToolSpec
from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._types import Dialect, Loss, PreparedTool, PreparedTools
from xpeval.adapters.schema.apply import apply_dialect
from xpeval.adapters.schema.names import NAME_RULES, map_names

STRICT: dict[Dialect, bool | None] = {"openai-strict": True, "anthropic-strict": True}
TOOL_CAPS: dict[Dialect, int] = {
    "openai": 128,
    "openai-strict": 128,
    "moonshot": 128,
    "gemini-openapi": 512,
    "gemini-json-schema": 512,
    "anthropic-strict": 20,
}
_ANTHROPICSTRICT_OPTIONAL = 24


def prepare_tools(dialect: Dialect, tools: list[ToolSpec]) -> PreparedTools:
    """Every tool of one request prepared for `dialect` (pure; see the module docstring)."""
    names = map_names(dialect, [tool.name for tool in tools])
    rule = NAME_RULES[dialect]
    cap = TOOL_CAPS.get(dialect)
    optional_total = 0
    accepted = 0
    prepared: list[PreparedTool] = []
    for index, tool in enumerate(tools):
        if index in names.duplicates:
            prepared.append(
                PreparedTool(
                    original=tool,
                    sent=None,
                    refusal=f"duplicate tool name {tool.name!r} in one request",
                    refusal_rule=R.DUPLICATE_NAME.id,
                )
            )
            continue
        result = apply_dialect(dialect, tool.parameters)
        if result.refusal is not None or result.schema_ is None:
            prepared.append(
                PreparedTool(
                    original=tool,
                    sent=None,
                    losses=result.losses,
                    refusal=result.refusal or "refused",
                    refusal_rule=result.refusal_rule,
                )
            )
            continue
        if cap is not None and accepted >= cap:
            prepared.append(
                PreparedTool(
                    original=tool,
                    sent=None,
                    refusal=f"{dialect} accepts at most {cap} tools in one request",
                    refusal_rule=R.TOOL_CAP.id,
                )
            )
            continue
        if dialect == "anthropic-strict":
            optional = count_optional(result.schema_)
            if optional_total + optional > _ANTHROPICSTRICT_OPTIONAL:
                prepared.append(
                    PreparedTool(
                        original=tool,
                        sent=None,
                        losses=result.losses,
                        refusal=(
                            f"Anthropic strict tool use compiles all tools into one grammar; this tool's "
                            f"{optional} optional properties would bring the request to "
                            f"{optional_total + optional} (reported ceiling {_ANTHROPICSTRICT_OPTIONAL})"
                        ),
                        refusal_rule=R.ANTHROPIC_STRICT_OPTIONAL.id,
                    )
                )
                continue
            optional_total += optional
        accepted += 1
        wire_name = names.wire[tool.name]
        losses = list(result.losses)
        if wire_name != tool.name:
            losses.insert(
                0,
                Loss(
                    pointer="",
                    keyword="name",
                    action="renamed",
                    detail=f"{tool.name!r} sent as {wire_name!r} (names must match {rule.text})",
                ),
            )
        sent = ToolSpec(name=wire_name, description=tool.description, parameters=result.schema_)
        prepared.append(PreparedTool(original=tool, sent=sent, losses=losses, arguments=result.arguments))
    return PreparedTools(dialect=dialect, tools=prepared, strict=STRICT.get(dialect))


def count_optional(schema: dict[str, Any]) -> int:
    """Properties not listed in their object's `required`, over the whole schema and its `$defs`."""
    total = 0
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                required = node.get("required")
                listed = set(required) if isinstance(required, list) else set()
                total += sum(1 for name in props if name not in listed)
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend(node)
    return total
