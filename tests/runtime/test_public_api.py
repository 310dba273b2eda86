"""`xpeval.evals.runtime` lists its whole public surface in `__all__`."""

from __future__ import annotations

import types

import xpeval.evals.runtime


def test_all_names_every_public_export_and_nothing_else() -> None:
    # every public name the package lists in dir(), imported or not (its exports load lazily)
    public = {name for name in dir(xpeval.evals.runtime) if not name.startswith("_")}
    assert all(not isinstance(getattr(xpeval.evals.runtime, n), types.ModuleType) for n in public)
    assert set(xpeval.evals.runtime.__all__) == public
    assert {"ToolRegistry", "ToolRouter", "AgentLoop"} <= public
