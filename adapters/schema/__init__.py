"""JSON Schema dialect passes: rewrite a tool's schema into what a provider accepts.

Public surface used by the adapters (keep it stable):

- `Dialect`, `DIALECTS`: the dialect names a registry entry can name.
- `prepare_tools(dialect, tools) -> PreparedTools`: every tool rewritten for one dialect, with
  its losses or its refusal, names mapped for the provider, and the way back for decoded calls
  (`PreparedTools.wire_name`, `PreparedTools.restore`).
- `apply_dialect(dialect, schema) -> PassResult`: one parameters schema rewritten (pure), with
  every `Loss` (JSON pointer into the original, keyword, action, detail) or a refusal;
  `PassResult.restore_arguments` / `arguments_to_wire` map arguments between the two schemas.
- `Budgets`: the depth / node / expansion budgets of one pass.
- `safe_json.loads` / `safe_json.load_path`: read a schema file of any depth without RecursionError.
"""

from __future__ import annotations

from xpeval.adapters.schema._types import (
    DIALECTS,
    FORM_ACTIONS,
    Dialect,
    Loss,
    LossAction,
    PassResult,
    PreparedTool,
    PreparedTools,
)
from xpeval.adapters.schema._walk import Budgets
from xpeval.adapters.schema.apply import apply_dialect
from xpeval.adapters.schema.argument_map import ArgumentMap
from xpeval.adapters.schema.names import map_names
from xpeval.adapters.schema.prepare import prepare_tools

__all__ = [
    "DIALECTS",
    "FORM_ACTIONS",
    "ArgumentMap",
    "Budgets",
    "Dialect",
    "Loss",
    "LossAction",
    "PassResult",
    "PreparedTool",
    "PreparedTools",
    "apply_dialect",
    "map_names",
    "prepare_tools",
]
