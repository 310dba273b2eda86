"""JSON Schema dialect passes: rewrite a tool's schema into what a provider accepts.

Public surface used by the adapters (keep it stable):

- `Dialect`: the dialect names a registry entry can name.
- `prepare_tools(dialect, tools) -> PreparedTools`: every tool rewritten for one dialect, with
  its losses or its refusal, names mapped for the provider, and the way back for decoded calls.
"""

from __future__ import annotations

from adapters.schema._types import DIALECTS, Dialect, Loss, PassResult, PreparedTool, PreparedTools
from adapters.schema.prepare import prepare_tools

__all__ = ["DIALECTS", "Dialect", "Loss", "PassResult", "PreparedTool", "PreparedTools", "prepare_tools"]
