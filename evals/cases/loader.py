"""Read case files into `Case`s; every problem becomes a `UserError` naming the file and field.

A case folder holds YAML files (`*.yaml`, `*.yml`) and JSON Lines files (`*.jsonl`, one case
per line, as `xpeval cases bfcl --out` writes them). A YAML file is either one case (a mapping
with an `id`) or a mapping with a `cases:` list; other top-level keys must start with `x-` and
only hold YAML anchors (tool definitions shared by several cases of the file).

YAML is read with the YAML 1.2 core rules for scalars: `2025-03-14` stays a string (not a
date) and only true/false are booleans (`no`, `on`, `off` stay strings), so an acceptable
value means what it says.

A case file comes from a pull request: it is read within the project's input limits
(`xpeval.evals.untrusted`: its size, and the YAML nodes it stands for, aliases expanded), so an
alias bomb or a 200 MB file is one line naming the file, never a hang.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from xpeval.evals.cases.model import Case, Category
from xpeval.evals.errors import UserError
from xpeval.evals.project import input_limits
from xpeval.evals.untrusted import InputLimits, InputRefused, load_yaml, read_bounded

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
"""The case set written for this project."""

CASE_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl")

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CaseYamlLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """SafeLoader without YAML 1.1 timestamps and yes/no/on/off booleans."""


_CaseYamlLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_CaseYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


@dataclass(frozen=True)
class LoadedCase:
    """A case and the file it came from (relative to the folder that was loaded)."""

    case: Case
    file: str


def load_cases(
    source: Path = BUILTIN_DIR,
    *,
    categories: Iterable[Category] | None = None,
    limits: InputLimits | None = None,
) -> list[LoadedCase]:
    """Every case in a folder (recursively, in path order) or in one file.

    Case ids are unique across the whole set: a repeated id is an error naming both files.
    `limits` default to the project's (`[tool.xpeval]`).
    """
    if not source.exists():
        raise UserError(f"{source}: no such case file or folder")
    if source.is_file():
        files, root = [source], source.parent
    else:
        files = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in CASE_FILE_SUFFIXES)
        root = source
    wanted = set(categories) if categories is not None else None
    limits = limits or input_limits()
    loaded: list[LoadedCase] = []
    seen: dict[str, str] = {}
    for path in files:
        for item in load_case_file(path, root=root, limits=limits):
            if item.case.id in seen:
                raise UserError(f"{item.file}: case id {item.case.id!r} already used in {seen[item.case.id]}")
            seen[item.case.id] = item.file
            if wanted is None or item.case.category in wanted:
                loaded.append(item)
    return loaded


def load_case_file(
    path: Path, *, root: Path | None = None, limits: InputLimits | None = None
) -> list[LoadedCase]:
    """The cases of one file, validated; `root` makes the reported file name relative."""
    shown = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else str(path)
    limits = limits or input_limits()
    try:
        text = read_bounded(path, limits).decode("utf-8")
    except InputRefused as exc:
        raise UserError(f"{shown}: case file refused: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{shown}: cannot read case file: {exc}") from exc
    raw_cases = _raw_cases(text, path.suffix, shown, limits)
    cases = [_validate(raw, shown, where) for where, raw in raw_cases]
    return [LoadedCase(case=case, file=shown) for case in cases]


def _raw_cases(text: str, suffix: str, shown: str, limits: InputLimits) -> Iterator[tuple[str, Any]]:
    if suffix == ".jsonl":
        # JSON Lines ends a line at "\n" only: str.splitlines also splits at U+2028, U+0085 and
        # other separators a JSON string may hold unescaped (`xpeval cases requests` writes them).
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                yield f"line {number}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{shown}: line {number}: invalid JSON: {exc.msg}") from exc
            except RecursionError as exc:
                raise UserError(f"{shown}: line {number}: JSON nested too deeply to read") from exc
        return
    try:
        document = load_yaml(text, _CaseYamlLoader, limits)  # a SafeLoader subclass: no arbitrary objects
    except InputRefused as exc:
        raise UserError(f"{shown}: case file refused: {exc}") from exc
    except yaml.YAMLError as exc:
        raise UserError(f"{shown}: invalid YAML: {_one_line(str(exc))}") from exc
    if isinstance(document, dict) and "id" in document:
        yield "case 0", document
        return
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise UserError(f"{shown}: expected one case (a mapping with an id) or a mapping with a `cases` list")
    extra = [key for key in document if key != "cases" and not str(key).startswith("x-")]
    if extra:
        raise UserError(f"{shown}: unknown top-level key {extra[0]!r} (only `cases` and `x-...` anchors)")
    for index, raw in enumerate(document["cases"]):
        yield f"case {index}", raw


def _validate(raw: Any, shown: str, where: str) -> Case:
    label = f"{where} ({raw['id']})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else where
    if not isinstance(raw, dict):
        raise UserError(f"{shown}: {label}: a case must be a mapping, got {type(raw).__name__}")
    try:
        # Anchored YAML shares objects between cases; a copy keeps each case's data its own.
        return Case.model_validate(copy.deepcopy(raw))
    except ValidationError as exc:
        raise UserError(f"{shown}: {label}: {describe_validation_error(exc)}") from exc
    except RecursionError as exc:
        raise UserError(f"{shown}: {label}: nested too deeply to read") from exc


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """The first errors of a pydantic ValidationError as `field.path: message`, on one line."""
    parts = []
    for error in exc.errors()[:limit]:
        loc = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {message}" if loc else message)
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _one_line(text: str) -> str:
    return " ".join(text.split())
