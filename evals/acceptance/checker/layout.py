"""Which wire's tool layout each provider mode judges, read from the wire itself.

The checker judges a tool definition exactly as the provider's REST body carries it, so it must
know which member holds the schema (Gemini's two schema members are read by different rules).
That is the wire's fact (`Wire.tool_layout`), and so is the mode table: each wire's
`WirePlugin.acceptance` names its rule sets, the dialect whose requests each judges and the
strict flag they send (`adapters/wires/catalog.py`); this module reads it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from xpeval.adapters.contract import WireName
from xpeval.adapters.wires import ToolLayout, get_wire
from xpeval.adapters.wires.catalog import AcceptanceMode, acceptance_modes
from xpeval.evals.acceptance.checker._types import ProviderMode
from xpeval.evals.acceptance.checker.walk import to_pointer


def modes() -> dict[ProviderMode, tuple[WireName, AcceptanceMode]]:
    """Every mode, by name, with the wire whose requests it judges: the acceptance modes each
    registered wire declares (`WirePlugin.acceptance`; xpeval's own wires' and plugins' alike)."""
    return acceptance_modes()


def mode_of(mode: ProviderMode) -> tuple[WireName, AcceptanceMode]:
    """The wire and acceptance mode named `mode`; ValueError naming the known ones otherwise."""
    known = modes()
    if not isinstance(mode, str) or mode not in known:
        raise ValueError(f"Unknown provider mode: {mode!r} (known: {', '.join(known)})")
    return known[mode]


def layout_for(mode: ProviderMode) -> ToolLayout:
    """Where a tool definition judged by `mode` carries its parts, as its wire says."""
    wire, spec = mode_of(mode)
    return _layout(wire, spec.dialect, spec.strict)


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
    candidates = {name: spec for name, (judged, spec) in modes().items() if judged == wire}
    if not candidates:
        raise ValueError(f"No acceptance rules for wire {wire!r}")
    sent = get_wire(wire).tool_layout(dialect, strict)
    fitting = [name for name, spec in candidates.items() if _layout(wire, spec.dialect, spec.strict) == sent]
    if not fitting:
        raise ValueError(f"No acceptance rules for what the {wire} wire sends for the {dialect} dialect")
    return next((name for name in fitting if candidates[name].dialect == dialect), fitting[0])


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
