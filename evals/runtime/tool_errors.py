"""Configuration errors of the tool runtime, and the one rule for turning an exception into text.

Configuration mistakes (a blank or duplicate id, registering into a sealed registry) raise;
dispatch never does: the router answers with values.
"""

from __future__ import annotations


class ToolRegistryError(ValueError):
    """A registration the registry refuses (blank or duplicate id, non-object schema, sealed)."""


class ToolNotFoundError(LookupError):
    """A tool id the registry does not hold: `unknown tool: <id>`."""

    def __init__(self, tool_id: object) -> None:
        super().__init__(f"unknown tool: {display_name(tool_id)}")
        self.tool_id = tool_id

    def __str__(self) -> str:
        return str(self.args[0])


class ToolRouterError(ValueError):
    """A route the router refuses (blank or duplicate name, handler not callable)."""


def describe_exception(exc: BaseException) -> str:
    """`str(exc)` when the exception has a message, else its type name (never "" and never raises)."""
    try:
        text = str(exc)
    except Exception:  # a broken __str__ must not turn one tool failure into a crash
        text = ""
    return text if text.strip() else type(exc).__name__


def display_name(name: object) -> str:
    """A tool name as text for messages and audit rows; a non-string says only its type."""
    return name if isinstance(name, str) else f"<{type(name).__name__}>"
