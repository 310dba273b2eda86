"""Which wire's tool layout each provider mode judges, read from the wire itself.

The checker judges a tool definition exactly as the provider's REST body carries it, so it must
know which member holds the schema (Gemini's two schema members are read by different rules).
That is the wire's fact (`Wire.tool_layout`); what this module adds is the mode table: for each
rule set, the wire and the dialect whose requests it judges, and the strict flag they send.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from xpeval.adapters.contract import WireName
from xpeval.adapters.wires import ToolLayout, get_wire
from xpeval.adapters.wires.catalog import acceptance_modes
from xpeval.evals.acceptance.checker._types import ProviderMode
from xpeval.evals.acceptance.checker.walk import to_pointer


@dataclass(frozen=True)
class ModeSpec:
    wire: WireName
    dialect: str
    """The dialect whose requests the mode judges: the wire lays their tools out for it, and a
    mode that names a dialect judges that dialect's provider on another provider's wire."""
    strict: bool | None = None


MODES: dict[ProviderMode, ModeSpec] = {
    "openai-chat": ModeSpec("openai-chat", "openai"),
    "openai-chat-strict": ModeSpec("openai-chat", "openai-strict", True),
    "openai-responses": ModeSpec("openai-responses", "openai", False),
    "openai-responses-strict": ModeSpec("openai-responses", "openai-strict", True),
    "anthropic": ModeSpec("anthropic-messages", "anthropic"),
    "anthropic-strict": ModeSpec("anthropic-messages", "anthropic-strict", True),
    "gemini-parameters": ModeSpec("google-genai", "gemini-openapi"),
    "gemini-json-schema": ModeSpec("google-genai", "gemini-json-schema"),
    "moonshot": ModeSpec("openai-chat", "moonshot"),
}


def mode_specs() -> dict[ProviderMode, ModeSpec]:
    """Every mode: the built-in ones (`MODES`), then those of plugin wires (`xpeval.plugin`)."""
    plugged = {
        name: ModeSpec(wire, mode.dialect, mode.strict)
        for name, (wire, mode) in acceptance_modes().items()
        if name not in MODES  # a plugin's modes are named after its wire: never a built-in one
    }
    return {**MODES, **plugged}


def layout_for(mode: ProviderMode) -> ToolLayout:
    """Where a tool definition judged by `mode` carries its parts, as its wire says."""
    spec = mode_specs()[mode]
    return _layout(spec.wire, spec.dialect, spec.strict)


@cache
def _layout(wire: WireName, dialect: str, strict: bool | None) -> ToolLayout:
    return get_wire(wire).tool_layout(dialect, strict)


def layout_pointer(layout: ToolLayout, *tokens: str) -> str:
    """JSON pointer into a definition in `layout` to `tokens` inside its envelope."""
    return to_pointer(layout.path(*tokens))


def mode_for(wire: WireName, dialect: str, strict: bool | None) -> ProviderMode:
    """The rule set that judges what an adapter sends: a mode of its wire whose layout is the one
    the wire sends for its dialect and strict flag; of those, the one naming its dialect (the
    provider its dialect names: Moonshot on the OpenAI Chat wire), else the first.

    The Responses wire always sends `strict` (omitted, the API normalises tools to strict form when
    it can: docs/provider-schema-rules.md §3), so its flag decides between the strict rules and not.
    """
    specs = mode_specs()
    candidates = [mode for mode, spec in specs.items() if spec.wire == wire]
    if not candidates:
        raise ValueError(f"No acceptance rules for wire {wire!r}")
    sent = get_wire(wire).tool_layout(dialect, strict)
    fitting = [
        mode
        for mode in candidates
        if _layout(specs[mode].wire, specs[mode].dialect, specs[mode].strict) == sent
    ]
    if not fitting:
        raise ValueError(f"No acceptance rules for what the {wire} wire sends for the {dialect} dialect")
    return next((mode for mode in fitting if specs[mode].dialect == dialect), fitting[0])


def build_definition(mode: ProviderMode, name: str, description: str, schema: Any) -> dict[str, Any]:
    """The tool definition as the mode's REST body carries it."""
    return layout_for(mode).definition(name, description, schema)


def sent_schema(mode: ProviderMode, definition: Any) -> Any:
    """The schema a definition carries for `mode` (None when absent)."""
    return layout_for(mode).schema(definition)


def definitions_in_request(wire: WireName, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool definitions in a wire's SDK call arguments, in the provider's REST shape (the
    wire knows where its SDK takes them and how it sends them)."""
    return get_wire(wire).tool_definitions(kwargs)
