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
import difflib
import json
import re
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from xpeval.errors import UserError
from xpeval.evals.cases.model import Case, Category
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


MAX_PROBLEMS_PER_CASE = 10
"""Field problems listed for one case before "and N more"."""
MAX_PROBLEMS_PER_FILE = 50
"""Problem lines listed for one file before "and N more": a file of 10,000 broken cases stays readable."""


class CaseFileProblems(UserError):
    """Every problem of the case files that were read, one line each (file, case, field, what is
    wrong, what is allowed), bounded per case and per file, and the count of them all."""

    def __init__(self, lines: list[str], count: int, files: int) -> None:
        self.lines = lines
        self.count = count
        self.files = files
        listed = "".join(f"\n  {line}" for line in lines)
        one = count == 1 and len(lines) == 1  # one problem stays one line
        super().__init__(lines[0] if one else f"the case files have problems:{listed}\n{self.summary()}")

    def summary(self) -> str:
        noun = "problem" if self.count == 1 else "problems"
        return f"{self.count} {noun} in {self.files} case file(s)"


@dataclass
class _Problems:
    """Problems gathered while reading files; the lines shown are bounded per file."""

    lines: list[str]
    count: int = 0
    files: int = 0

    def add_file(self, shown: str, problems: list[str]) -> None:
        if not problems:
            return
        self.files += 1
        self.count += len(problems)
        self.lines.extend(problems[:MAX_PROBLEMS_PER_FILE])
        if len(problems) > MAX_PROBLEMS_PER_FILE:
            self.lines.append(f"{shown}: and {len(problems) - MAX_PROBLEMS_PER_FILE} more problems")

    def raise_any(self) -> None:
        if self.count:
            raise CaseFileProblems(self.lines, self.count, self.files)


def case_files(source: Path) -> tuple[list[Path], Path]:
    """The case files of a folder (recursively, in path order) or the one file, and the folder
    their names are shown relative to."""
    if not source.exists():
        raise UserError(f"{source}: no such case file or folder")
    if source.is_file():
        return [source], source.parent
    return sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in CASE_FILE_SUFFIXES), source


def load_cases(
    source: Path = BUILTIN_DIR,
    *,
    categories: Iterable[Category] | None = None,
    limits: InputLimits | None = None,
) -> list[LoadedCase]:
    """Every case in a folder (recursively, in path order) or in one file.

    Case ids are unique across the whole set: a repeated id is an error naming both files.
    `limits` default to the project's (`[tool.xpeval]`). Every problem of every file is
    gathered first: `CaseFileProblems` lists them all.
    """
    files, root = case_files(source)
    wanted = set(categories) if categories is not None else None
    every = read_case_files(files, root, limits or input_limits())
    return [item for item in every if wanted is None or item.case.category in wanted]


def read_case_files(files: list[Path], root: Path, limits: InputLimits) -> list[LoadedCase]:
    """The valid cases of every file, or `CaseFileProblems` listing every problem of every file
    (cases that fail, and case ids used twice)."""
    problems = _Problems(lines=[])
    loaded: list[LoadedCase] = []
    seen: dict[str, str] = {}
    for path in files:
        shown, items, found = _read_case_file(path, root, limits)
        for item in items:
            if item.case.id in seen:
                found.append(f"{item.file}: case id {item.case.id!r} already used in {seen[item.case.id]}")
                continue
            seen[item.case.id] = item.file
            loaded.append(item)
        problems.add_file(shown, found)
    problems.raise_any()
    return loaded


def load_case_file(
    path: Path, *, root: Path | None = None, limits: InputLimits | None = None
) -> list[LoadedCase]:
    """The cases of one file, validated; `root` makes the reported file name relative.
    `CaseFileProblems` lists every problem of the file."""
    shown, items, found = _read_case_file(path, root, limits or input_limits())
    problems = _Problems(lines=[])
    problems.add_file(shown, found)
    problems.raise_any()
    return items


def _read_case_file(
    path: Path, root: Path | None, limits: InputLimits
) -> tuple[str, list[LoadedCase], list[str]]:
    """The file's name as shown, its valid cases and a line per problem found in it."""
    shown = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else str(path)
    try:
        text = read_bounded(path, limits).decode("utf-8")
    except InputRefused as exc:
        return shown, [], [f"{shown}: case file refused: {exc}"]
    except (OSError, UnicodeDecodeError) as exc:
        return shown, [], [f"{shown}: cannot read case file: {exc}"]
    items: list[LoadedCase] = []
    problems: list[str] = []
    try:
        for where, raw in _raw_cases(text, path.suffix, shown, limits):
            if isinstance(raw, str):  # a line that is not a case at all (invalid JSON)
                problems.append(f"{shown}: {where}: {raw}")
                continue
            case, wrong = _validate(raw, where)
            if case is not None:
                items.append(LoadedCase(case=case, file=shown))
            problems.extend(f"{shown}: {line}" for line in wrong)
    except UserError as exc:  # the file as a whole cannot be read: one line for it
        problems.append(str(exc))
    return shown, items, problems


def _raw_cases(text: str, suffix: str, shown: str, limits: InputLimits) -> Iterator[tuple[str, Any]]:
    """Each case's place in the file and its raw data; a JSON line that cannot be read yields
    the reason as a string (the next lines are still read)."""
    if suffix == ".jsonl":
        # JSON Lines ends a line at "\n" only: str.splitlines also splits at U+2028, U+0085 and
        # other separators a JSON string may hold unescaped (`xpeval cases requests` writes them).
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                yield f"line {number}", json.loads(line)
            except json.JSONDecodeError as exc:
                yield f"line {number}", f"invalid JSON: {exc.msg}"
            except RecursionError:
                yield f"line {number}", "JSON nested too deeply to read"
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


def _validate(raw: Any, where: str) -> tuple[Case | None, list[str]]:
    """The case, or None and a line per problem (`<place> (<id>): <field>: <what is wrong>`)."""
    label = f"{where} ({raw['id']})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else where
    if not isinstance(raw, dict):
        return None, [f"{label}: a case must be a mapping, got {type(raw).__name__}"]
    try:
        # Anchored YAML shares objects between cases; a copy keeps each case's data its own.
        return Case.model_validate(copy.deepcopy(raw)), []
    except ValidationError as exc:
        found = case_problems(exc, raw)
    except RecursionError:
        return None, [f"{label}: nested too deeply to read"]
    lines = [f"{label}: {problem}" for problem in found[:MAX_PROBLEMS_PER_CASE]]
    if len(found) > MAX_PROBLEMS_PER_CASE:
        lines.append(f"{label}: and {len(found) - MAX_PROBLEMS_PER_CASE} more problems in this case")
    return None, lines


def case_problems(exc: ValidationError, raw: Any) -> list[str]:
    """Each error of a case as the case file states it: `field: what is wrong; what is allowed`,
    the field as written in the file (`expected.calls[0].arguments.order_id`), duplicates once."""
    lines: list[str] = []
    for error in _one_problem_each(exc.errors(include_url=False)):
        path, wrong = _problem(error, raw)
        line = f"{_field(path)}: {wrong}" if path else wrong
        if line not in lines:
            lines.append(line)
    return lines


def _one_problem_each(errors: list[Any]) -> Iterator[Any]:
    """pydantic's errors, a case's rules relating its fields split into one error a problem
    (`Case._consistent` reports them all, a line each)."""
    for error in errors:
        message = str(error["msg"])
        if error["type"] != "value_error" or "\n" not in message:
            yield error
            continue
        for line in message.removeprefix("Value error, ").splitlines():
            yield {**error, "msg": line}


_PATH_PREFIX = re.compile(r"^([A-Za-z_][\w-]*(?:(?:\.[\w-]+)|(?:\[\d+\]))*): (.+)$", re.DOTALL)
_ARGUMENT_HINT = "an expected argument is a list of acceptable values: write {written}"


def _problem(error: Any, raw: Any) -> tuple[list[str | int], str]:
    """The field (a path in the raw case) and what is wrong with it, with what is allowed."""
    path = _user_path(error["loc"], raw)
    kind = error["type"]
    # "a valid dictionary or instance of Expected": the class is ours, not the file's
    message = re.sub(r" or instance of \w+", "", str(error["msg"]).removeprefix("Value error, "))
    if kind == "value_error" and (found := _PATH_PREFIX.match(message)):
        path = [*path, *_split_path(found.group(1))]
        message = found.group(2)
    if _is_expected_argument(path) and (kind == "list_type" or "must be a list" in message):
        value = _at(raw, path)
        return path, f"{_short(value)} is a single value; {_ARGUMENT_HINT.format(written=_short([value]))}"
    if kind == "union_tag_invalid" and isinstance(error.get("ctx"), dict):
        ctx = error["ctx"]
        field = str(ctx.get("discriminator", "")).strip("'\"")
        return [
            *path,
            field,
        ] if field else path, f"got {_short(ctx.get('tag'))}; allowed: {ctx.get('expected_tags')}"
    if message.endswith("is not a tool of this case"):
        return path, f"{message}; its tools: {', '.join(_tool_names(raw)) or 'none'}"
    if kind == "missing":
        return path, "missing: this field is required"
    if kind == "extra_forbidden":
        allowed = _allowed_fields(path[:-1])
        close = difflib.get_close_matches(str(path[-1]), allowed, n=1) if path else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return path, f"unknown field{hint}; allowed here: {', '.join(allowed) or 'none'}"
    if "input" in error and isinstance(error["input"], (str, int, float, bool)) and kind != "value_error":
        return path, f"got {_short(error['input'])}: {message}"
    return path, message


def _tool_names(raw: Any) -> list[str]:
    tools = raw.get("tools") if isinstance(raw, dict) else None
    return (
        [str(t["name"]) for t in tools if isinstance(t, dict) and "name" in t]
        if isinstance(tools, list)
        else []
    )


def _user_path(loc: tuple[str | int, ...], raw: Any) -> list[str | int]:
    """pydantic's location as keys of the case as written: the names pydantic adds for the arms
    of a union (`function-after[...]`, a model's name) are not in the file and are left out."""
    path: list[str | int] = []
    current = raw
    for index, part in enumerate(loc):
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_list or (isinstance(current, dict) and part in current):
            current = current[part]
        elif index < len(loc) - 1:
            continue  # a union arm's name
        else:
            current = None  # a missing or unknown field: named as pydantic names it
        path.append(part)
    return path


def _split_path(text: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in re.findall(r"[^.\[\]]+|\[\d+\]", text):
        parts.append(int(piece[1:-1]) if piece.startswith("[") else int(piece) if piece.isdigit() else piece)
    return parts


def _field(path: list[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _is_expected_argument(path: list[str | int]) -> bool:
    return len(path) >= 4 and path[-2] == "arguments" and "calls" in path


def _at(raw: Any, path: list[str | int]) -> Any:
    for part in path:
        if isinstance(raw, dict):
            raw = raw.get(part)
        elif isinstance(raw, list) and isinstance(part, int) and 0 <= part < len(raw):
            raw = raw[part]
        else:
            return None
    return raw


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _allowed_fields(path: list[str | int]) -> list[str]:
    """The fields a case file may write at `path` (empty when it is not a model's place)."""
    current: Any = Case
    for part in path:
        current = _container(current)
        if isinstance(part, int) and get_origin(current) is list:
            current = get_args(current)[0]
        elif isinstance(current, type) and issubclass(current, BaseModel) and part in current.model_fields:
            current = current.model_fields[str(part)].annotation
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return []
    current = _container(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [field.alias or name for name, field in current.model_fields.items()]
    return []


def _container(annotation: Any) -> Any:
    """An annotation without Optional, Annotated or a union around it (its first model or
    container arm)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _container(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        arms = [arm for arm in get_args(annotation) if arm is not type(None)]
        for arm in arms:
            inner = _container(arm)
            if get_origin(inner) in (list, dict) or (
                isinstance(inner, type) and issubclass(inner, BaseModel)
            ):
                return inner
        return arms[0] if arms else annotation
    return annotation


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
