"""The direct wires: each one a `WirePlugin` registered in `catalog.py`, xpeval's own and
plugins' alike. Only this package knows a provider's wire format (`RULES.md`)."""

from __future__ import annotations

from xpeval.adapters.contract import WireName
from xpeval.adapters.wires._base import RenderedResponse, Wire, parse_arguments
from xpeval.adapters.wires._layout import SchemaSemantics, ToolLayout
from xpeval.adapters.wires.catalog import is_builtin_wire, registered_wire, wire_names


def get_wire(name: WireName) -> Wire:
    """The codec of the wire registered as `name` (`catalog.register_wire`: xpeval's own and
    plugins' alike)."""
    registered = registered_wire(name)
    if registered is None:
        raise ValueError(f"Unknown wire: {name} (known: {', '.join(wire_names())})")
    return registered.codec


def wire_for_path(url: str) -> Wire | None:
    """The wire whose SDK sends its requests to `url` (a path with its query, or a whole URL),
    by each wire's own `request_paths`; None when no wire does (an OAuth token exchange, say).

    xpeval's own wires are asked first, and a plugin's only when none of them serves `url` (a
    plugin cannot take their paths); among several, the longest match wins (Mistral's host and
    path over OpenAI Chat's path alone)."""
    own = [name for name in wire_names() if is_builtin_wire(name)]
    for names in (own, [name for name in wire_names() if name not in own]):
        best: tuple[int, Wire] | None = None
        for name in names:
            wire = get_wire(name)
            found = [
                m.end() - m.start() for m in (p.search(url) for p in wire.request_paths) if m is not None
            ]
            if found and (best is None or max(found) > best[0]):
                best = (max(found), wire)
        if best is not None:
            return best[1]
    return None


def tool_file_layouts() -> dict[str, ToolLayout]:
    """The layouts a tool definition written for a wire comes in (a user's tools file in a
    provider's form), most specific first, by form name: OpenAI Chat's `{"type": "function",
    "function": {...}}`, Responses' flat function, Anthropic's `input_schema`."""
    return {
        "openai-chat": get_wire("openai-chat").tool_layout("openai", None),
        "openai-responses": get_wire("openai-responses").tool_layout("openai", None),
        "anthropic": get_wire("anthropic-messages").tool_layout("anthropic", None),
    }


__all__ = [
    "RenderedResponse",
    "SchemaSemantics",
    "ToolLayout",
    "Wire",
    "get_wire",
    "parse_arguments",
    "tool_file_layouts",
    "wire_for_path",
    "wire_names",
]
