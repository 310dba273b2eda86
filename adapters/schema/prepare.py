"""Apply a dialect to every tool of a request.

Placeholder until the dialect passes land (issue 5): schemas and names go through unchanged
and no loss is reported. The interface is the one the adapters use.
"""

from __future__ import annotations

from adapters.contract import ToolSpec
from adapters.schema._types import Dialect, PreparedTool, PreparedTools

_STRICT: dict[Dialect, bool | None] = {"openai-strict": True, "anthropic-strict": True}


def prepare_tools(dialect: Dialect, tools: list[ToolSpec]) -> PreparedTools:
    prepared = [PreparedTool(original=tool, sent=tool) for tool in tools]
    return PreparedTools(dialect=dialect, tools=prepared, strict=_STRICT.get(dialect))
