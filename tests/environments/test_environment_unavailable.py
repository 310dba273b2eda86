"""Without bfcl-eval, an environment case cannot be played or judged: one line saying how to
install it (a UserError, exit 2), never a traceback or a made-up verdict."""

from __future__ import annotations

import pytest

from xpeval.errors import UserError
from xpeval.evals.cases.environment import Environment
from xpeval.evals.runtime import environment


def test_a_missing_bfcl_eval_is_one_line_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")

    monkeypatch.setattr("importlib.import_module", missing)
    with pytest.raises(
        UserError, match=r"needs bfcl-eval .*pip install --no-deps bfcl-eval==2026\.3\.23 mpmath"
    ):
        environment.ToolEnvironment(Environment(classes=["GorillaFileSystem"]))
