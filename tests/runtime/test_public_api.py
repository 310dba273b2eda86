"""`xpeval.evals.runtime` lists its whole public surface in `__all__`."""

from __future__ import annotations

import types

import xpeval.evals.runtime


def test_all_names_every_public_export_and_nothing_else() -> None:
    public = {
        name
        for name, value in vars(xpeval.evals.runtime).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(xpeval.evals.runtime.__all__) == public
    assert {"ToolRegistry", "ToolRouter", "AgentLoop"} <= public
