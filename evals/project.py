"""A project's xpeval settings: `[tool.xpeval]` in its pyproject.toml, found from any subfolder.

    [tool.xpeval]
    cases = "evals/cases"          # a case folder (default: xpeval's built-in cases)
    cassettes = "cassettes"        # default "cassettes"
    reports = "reports"            # default "reports"; results go to <reports>/results.jsonl
    baseline = "reports/baseline.json"   # default: the case folder's baseline.json, or reports/baseline.json
    adapters = ["openai-chat", "deepseek"]   # default: every registered adapter
    models = ["deepseek=deepseek-chat"]      # as --models
    max_input_mb = 32              # the largest case file or cassette read (and its decoded bodies)
    max_yaml_nodes = 100000        # the most nodes a YAML file may stand for, aliases expanded
    local_model_url = "http://127.0.0.1:11434/v1"   # your own OpenAI-compatible server as the
                                   # local-model target (as --local-model-url; docs/local-model.md)

Paths are relative to the project root (the folder of that pyproject.toml), so `xpeval run`
and `pytest` find the same files from anywhere inside the project. Without such a table the
root is the current folder. Command-line flags win over the table.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xpeval.errors import UserError
from xpeval.evals.untrusted import InputLimits

KEYS = frozenset(
    {"cases", "cassettes", "reports", "results", "baseline", "adapters", "models"}
    | {"max_input_mb", "max_yaml_nodes", "local_model_url"}
)


@dataclass(frozen=True)
class ProjectSettings:
    root: Path
    cassettes: Path
    reports: Path
    results: Path
    cases: Path | None = None
    baseline: Path | None = None
    adapters: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    pyproject: Path | None = None
    """The file the settings came from (None: no `[tool.xpeval]` table was found)."""
    limits: InputLimits = field(default_factory=InputLimits)
    """The caps on case files and cassettes (`xpeval.evals.untrusted`)."""
    local_model_url: str | None = None
    """The team's own OpenAI-compatible server, the `local-model` target (`--local-model-url`)."""

    def selected_adapters(self, flag: Sequence[str] | str | None) -> tuple[str, ...]:
        """The adapters a command works on: `--adapters` (comma lists, `all`), else this project's
        `adapters`; nothing named is () and the command picks its default. An id nothing
        installed offers says where it was named (the flag, or this pyproject.toml)."""
        from xpeval.adapters.registry import select_adapters

        values = [flag] if isinstance(flag, str) else list(flag or ())
        if any(value.strip() for value in values):
            return tuple(select_adapters(values, named_by="--adapters"))
        return tuple(select_adapters(self.adapters, named_by=f"[tool.xpeval] adapters in {self.pyproject}"))


def find_pyproject(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest pyproject.toml at or above `start` with a `[tool.xpeval]` table."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            document = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise UserError(f"{candidate}: cannot read it as TOML: {exc}") from exc
        table = document.get("tool", {}).get("xpeval")
        if table is not None:
            if not isinstance(table, dict):
                raise UserError(f"{candidate}: [tool.xpeval] must be a table")
            return candidate, table
    return None


def _paths(table: dict[str, Any], name: str, where: Path) -> str | None:
    value = table.get(name)
    if value is not None and not isinstance(value, str):
        raise UserError(f"{where}: [tool.xpeval] {name} must be a path (a string)")
    return value


def _names(table: dict[str, Any], name: str, where: Path) -> tuple[str, ...]:
    value = table.get(name, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UserError(f"{where}: [tool.xpeval] {name} must be a list of strings")
    return tuple(value)


def _limits(table: dict[str, Any], where: Path) -> InputLimits:
    size, nodes = table.get("max_input_mb"), table.get("max_yaml_nodes")
    if size is not None and (
        isinstance(size, bool) or not isinstance(size, (int, float)) or not 0 < size < 1e6
    ):
        raise UserError(f"{where}: [tool.xpeval] max_input_mb must be a positive number of megabytes")
    if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, int) or nodes <= 0):
        raise UserError(f"{where}: [tool.xpeval] max_yaml_nodes must be a positive whole number")
    return InputLimits.of(size, nodes)


def project_settings(start: Path | None = None) -> ProjectSettings:
    """The settings of the project around `start` (default: the current folder)."""
    here = (start or Path.cwd()).resolve()
    found = find_pyproject(here)
    if found is None:
        return ProjectSettings(
            root=here,
            cassettes=here / "cassettes",
            reports=here / "reports",
            results=here / "reports" / "results.jsonl",
        )
    pyproject, table = found
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise UserError(
            f"{pyproject}: unknown [tool.xpeval] key(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(KEYS))})"
        )
    root = pyproject.parent

    def path(name: str, default: str | None) -> Path | None:
        value = _paths(table, name, pyproject) or default
        return root / value if value else None

    reports = path("reports", "reports")
    assert reports is not None
    return ProjectSettings(
        root=root,
        cassettes=path("cassettes", "cassettes") or root / "cassettes",
        reports=reports,
        results=path("results", None) or reports / "results.jsonl",
        cases=path("cases", None),
        baseline=path("baseline", None),
        adapters=_names(table, "adapters", pyproject),
        models=_names(table, "models", pyproject),
        pyproject=pyproject,
        limits=_limits(table, pyproject),
        local_model_url=_paths(table, "local_model_url", pyproject),
    )


def input_limits() -> InputLimits:
    """The input limits of the project around the current folder (`[tool.xpeval]`
    `max_input_mb`, `max_yaml_nodes`), else the defaults; read once per folder."""
    where = os.getcwd()
    cached = _LIMITS.get(where)
    if cached is None:
        cached = _LIMITS[where] = project_settings(Path(where)).limits
    return cached


_LIMITS: dict[str, InputLimits] = {}


def project_line(project: ProjectSettings, cwd: Path | None = None) -> str:
    """One line saying which project a command uses, or that there is none and what that means."""
    here = (cwd or Path.cwd()).resolve()

    def shown(path: Path) -> str:  # relative to where the user stands, when that is shorter
        absolute = str(path.resolve())
        relative = os.path.relpath(absolute, here)
        return relative if len(relative) < len(absolute) else absolute

    if project.pyproject is None:
        return (
            f"no [tool.xpeval] in {here}/pyproject.toml or above: the built-in cases, cassettes/ and "
            f"reports/ here (add a [tool.xpeval] table to your pyproject.toml to choose them)"
        )
    cases = shown(project.cases) if project.cases else "built-in"
    adapters = ", ".join(project.adapters) if project.adapters else "all"
    return (
        f"project {shown(project.pyproject)} [tool.xpeval]: cases {cases}, adapters {adapters}, "
        f"cassettes {shown(project.cassettes)}, reports {shown(project.reports)}"
    )
