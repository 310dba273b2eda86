"""Tools from where they live: tool files in the common forms, read into rows of the schema
acceptance measurement.

A file holds one tool or many; its form is detected per tool object, by its keys:

- `xpeval`: `{"name", "description", "parameters"}` (the schema corpus' own form);
- `openai-chat`: `{"type": "function", "function": {"name", "description", "parameters"}}`;
- `openai-responses`: `{"type": "function", "name", "description", "parameters", "strict"}`;
- `anthropic`: `{"name", "description", "input_schema"}`;
- `mcp`: `{"name", "description", "inputSchema", ...}`, alone or in a `tools/list` result
  `{"tools": [...]}`, itself alone or in a JSON-RPC response `{"jsonrpc", "id", "result"}`;
- a JSON list of any of these.

A file that holds a single tool object gives one row keyed by the file (its path relative to the
folder, without `.json`: the corpus' keys); a list or a `tools/list` result gives one row per
tool, keyed `file#name`. A built-in provider tool (`{"type": "web_search"}`: no schema of its
own) is skipped and said so. Anything else - not JSON, no tool in it, a tool without a name or
with a schema that is not a JSON object - is an input error naming the file and why, never a
verdict (`ToolsInputError`, exit status 2).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast, get_args

from xpeval.adapters.contract import ToolSpec
from xpeval.adapters.schema.safe_json import load_path
from xpeval.adapters.wires import tool_file_layouts
from xpeval.errors import UserError

Form = Literal["xpeval", "openai-chat", "openai-responses", "anthropic", "mcp"]
FORMS: tuple[Form, ...] = get_args(Form)

MAX_FILE_BYTES = 5_000_000
MAX_NESTING = 4
"""Containers inside containers (a list of `tools/list` results in a JSON-RPC response is 3):
deeper is not a tools file."""
SKIPPED_NAMES = ("MANIFEST", "README")
"""Files of a folder that describe it rather than hold tools (the shared corpus' MANIFEST)."""

NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
"""What an OpenAI function declared without `parameters` takes: OpenAI documents an omitted
`parameters` as an empty parameter list (docs/provider-schema-rules.md §1)."""


BUILTIN_CORPUS = Path(__file__).resolve().parents[1] / "corpus"
"""The built-in schema set (`evals/acceptance/corpus/`, its README.md says what each file probes)."""


class ToolsInputError(UserError):
    """A tool file or server that cannot be read: one line per problem, naming it."""


@dataclass(frozen=True)
class FoundTool:
    """One tool read from a file or a server."""

    key: str
    """The row key: `path/of/file` for a file holding one tool, `path/of/file#name` otherwise."""
    spec: ToolSpec
    form: Form
    source: str
    """The file (as given, joined with its place in the folder) or the server."""
    path: Path | None = None
    index: int = 0
    """The tool's position among the tools read from `path` (a worker reads the file again:
    a deep schema cannot be pickled)."""


@dataclass
class ReadResult:
    tools: list[FoundTool] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Built-in provider tools left out, each with where it was."""


@dataclass(frozen=True)
class _Found:
    where: str
    """Where in the file: `""` for the whole file, `[2]`, `.tools[0]`, ..."""
    name: str
    form: Form
    spec: ToolSpec
    in_container: bool


class _Problem(Exception):
    pass


class _Skip(Exception):
    pass


def tool_files(folder: Path) -> list[Path]:
    """Every tool file under `folder` (recursive `*.json`, MANIFEST/README excluded)."""
    return sorted(
        path
        for path in folder.rglob("*.json")
        if path.is_file() and not path.stem.upper().startswith(SKIPPED_NAMES)
    )


def read_tools(paths: Sequence[Path]) -> ReadResult:
    """Every tool of every file or folder in `paths`, in order. Raises `ToolsInputError` with one
    line per unreadable file (every file is read first, so all problems show at once)."""
    result = ReadResult()
    problems: list[str] = []
    for given in paths:
        if given.is_dir():
            files = tool_files(given)
            if not files:
                problems.append(f"{given}: no tool file (*.json) in this folder")
            entries = [(path, path.relative_to(given).with_suffix("").as_posix()) for path in files]
        elif given.is_file():
            entries = [(given, given.stem)]
        else:
            problems.append(f"{given}: no such file or folder")
            continue
        for path, base in entries:
            try:
                found, skipped = _read_file(path)
            except _Problem as exc:
                problems.append(f"{path}: {exc}")
                continue
            result.skipped += [f"{path}{item}" for item in skipped]
            for index, item in enumerate(found):
                key = f"{base}#{item.name}" if item.in_container else base
                result.tools.append(FoundTool(key, item.spec, item.form, str(path), path, index))
    problems += duplicate_keys(result.tools)
    if problems:
        raise ToolsInputError("\n".join(problems))
    return result


def duplicate_keys(tools: Sequence[FoundTool]) -> list[str]:
    """One problem per row key given twice (two tools of one name in a file or a server, or two
    sources that give the same key)."""
    first: dict[str, FoundTool] = {}
    problems = []
    for tool in tools:
        if tool.key in first:
            other = first[tool.key].source
            where = tool.source if other == tool.source else f"{other} and {tool.source}"
            problems.append(f"{where}: two tools give the row {tool.key!r} (tool names must be unique)")
        else:
            first[tool.key] = tool
    return problems


def tool_at(path: Path, index: int) -> ToolSpec:
    """The `index`-th tool of `path`, read again (a worker process's side of `FoundTool`)."""
    return _read_cached(str(path), path.stat().st_mtime_ns)[index]


@lru_cache(maxsize=4)
def _read_cached(path: str, mtime_ns: int) -> list[ToolSpec]:
    # one file's tools are measured one after the other: read it once per worker
    return [item.spec for item in _read_file(Path(path))[0]]


def _read_file(path: Path) -> tuple[list[_Found], list[str]]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise _Problem(f"larger than {MAX_FILE_BYTES} bytes")
        data = load_path(path)  # iterative for deep documents: json.loads would recurse
    except (OSError, UnicodeDecodeError) as exc:
        raise _Problem(f"cannot be read ({exc})") from exc
    except ValueError as exc:
        raise _Problem(f"not JSON ({exc})") from exc
    return read_document(data)


def read_document(data: Any) -> tuple[list[_Found], list[str]]:
    """The tools of one parsed JSON document and the built-in tools skipped; raises `_Problem`."""
    found: list[_Found] = []
    skipped: list[str] = []
    for where, item, in_container in _tool_objects(data, "", 0, False):
        try:
            found.append(_tool(item, where, in_container))
        except _Skip as exc:
            skipped.append(f"{where}: {exc}")
    if not found:
        what = "only built-in tools, which have no schema" if skipped else "no tool in it"
        raise _Problem(what + (" (an empty list)" if data == [] else ""))
    return found, skipped


def _tool_objects(data: Any, where: str, depth: int, in_container: bool) -> Iterator[tuple[str, Any, bool]]:
    """(where, tool object, inside a container) for every tool object of `data`."""
    if depth > MAX_NESTING:
        raise _Problem(f"not a tools file: containers nest deeper than {MAX_NESTING} levels at {where}")
    if isinstance(data, list):
        for i, item in enumerate(data):
            yield from _tool_objects(item, f"{where}[{i}]", depth + 1, True)
        return
    if not isinstance(data, dict):
        raise _Problem(f"not a tool definition at {where or 'the top level'}: a JSON {_kind(data)}")
    if "jsonrpc" in data and "name" not in data:
        if "error" in data:
            error = data["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise _Problem(f"a JSON-RPC error response, not a tools/list result: {message}")
        if not isinstance(data.get("result"), dict):
            raise _Problem(f'a JSON-RPC message without a "result" object at {where or "the top level"}')
        yield from _tool_objects(data["result"], f"{where}.result", depth + 1, True)
        return
    if "tools" in data and "name" not in data:
        tools = data["tools"]
        if not isinstance(tools, list):
            raise _Problem(f'"tools" at {where or "the top level"} is a JSON {_kind(tools)}, not a list')
        yield from _tool_objects(tools, f"{where}.tools", depth + 1, True)
        return
    yield where, data, in_container


def _tool(item: dict[str, Any], where: str, in_container: bool) -> _Found:
    """One tool object, its form detected by its keys."""
    at = f" at {where}" if where else ""
    kind = item.get("type")
    wire_form = _wire_form(item, at)
    schema_key: str | None
    if wire_form is not None:
        form, body, schema_key = wire_form
    elif "inputSchema" in item:
        form, body, schema_key = "mcp", item, "inputSchema"
    elif "parameters" in item:
        form, body, schema_key = "xpeval", item, "parameters"
    elif isinstance(kind, str):
        # a provider's built-in tool (`web_search`, `bash_20250124`) or an OpenAI custom
        # (free-text) tool: nothing to check, and not the user's mistake
        raise _Skip(f"a {kind!r} tool without a JSON schema (a built-in or free-text tool)")
    else:
        schema_key = None
        body, form = item, "xpeval"
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Problem(f"a tool{at} without a name" + ("" if name is None else f" (name is {name!r})"))
    label = f"tool {name!r}{at}"
    if schema_key is None:
        raise _Problem(
            f'{label}: no schema ("parameters", "input_schema" or "inputSchema"), so not a tool '
            "in any form xpeval reads"
        )
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise _Problem(f"{label}: description is a JSON {_kind(description)}, not a string")
    schema = body.get(schema_key)
    if schema is None and form in ("openai-chat", "openai-responses"):
        schema = NO_PARAMETERS
    if not isinstance(schema, dict):
        got = "missing" if schema_key not in body else f"a JSON {_kind(schema)}"
        raise _Problem(f'{label}: "{schema_key}" is {got}, not a JSON object (a schema)')
    spec = ToolSpec(name=name, description=description or "", parameters=schema)
    return _Found(where, name, form, spec, in_container)


def _wire_form(item: dict[str, Any], at: str) -> tuple[Form, dict[str, Any], str] | None:
    """(form, the object holding name/schema, its schema member) of a tool written for one of
    the wires, as the wires lay tools out (`xpeval.adapters.wires.tool_file_layouts`)."""
    for name, layout in tool_file_layouts().items():
        if not layout.holds(item):
            continue
        body = layout.inner(item)
        if body is None:
            raise _Problem(f'"{".".join(layout.envelope)}"{at} is not an object')
        return cast(Form, name), body, layout.schema_field
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )
