"""The four direct wires. Only this package knows a provider's wire format."""

from __future__ import annotations

from adapters.contract import WireName
from adapters.wires._base import RenderedResponse, Wire, parse_arguments


def get_wire(name: WireName) -> Wire:
    """The wire module object for `name` (imported lazily: each pulls in its SDK)."""
    if name == "openai-chat":
        from adapters.wires.openai_chat import WIRE as chat

        return chat
    if name == "openai-responses":
        from adapters.wires.openai_responses import WIRE as responses

        return responses
    if name == "anthropic-messages":
        from adapters.wires.anthropic import WIRE as anthropic

        return anthropic
    if name == "google-genai":
        from adapters.wires.google import WIRE as google

        return google
    raise ValueError(f"Unknown wire: {name}")


__all__ = ["RenderedResponse", "Wire", "get_wire", "parse_arguments"]
