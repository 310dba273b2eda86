"""The plugin API's public surface as text: every name of `xpeval.plugin.__all__` with its kind,
signature, bases and public members, read from the source by griffe (the way pydantic-ai checks
its API). `tests/plugin_api.snapshot.txt` is the committed copy; `tests/test_plugin_api_snapshot.py`
holds the two equal, so a change to the surface shows in review next to a `PLUGIN_API_VERSION` step.

Refresh the snapshot after raising PLUGIN_API_VERSION (xpeval/plugin.py):

    .venv/bin/python -m tests._plugin_api_surface --update

It refuses when the surface changed and the version did not, or when a name or signature was
removed or changed under a minor step (docs/plugin-api.md, "Versioning").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "plugin_api.snapshot.txt"
VERSION_LINE = "# PLUGIN_API_VERSION "
REFRESH = ".venv/bin/python -m tests._plugin_api_surface --update"
# dunder members that are part of what a plugin calls or implements
_PUBLIC_DUNDERS = frozenset({"__init__", "__call__"})
_VARIADIC = (griffe.ParameterKind.var_positional, griffe.ParameterKind.var_keyword)


def _resolved(obj: griffe.Object | griffe.Alias) -> griffe.Object:
    """An object itself, not the import that re-exports it."""
    return obj.final_target if isinstance(obj, griffe.Alias) else obj


def _export(obj: griffe.Object | griffe.Alias) -> griffe.Object:
    """An export's own object: through re-exports and the `Name = Other` of the TYPE_CHECKING
    block (names exported under another name than their module's)."""
    obj = _resolved(obj)
    if isinstance(obj, griffe.Attribute) and isinstance(obj.value, griffe.ExprName):
        return _export(obj.modules_collection[obj.value.canonical_path])
    return obj


def _parameters(function: griffe.Function) -> str:
    parts: list[str] = []
    star_written = False
    for i, parameter in enumerate(function.parameters):
        kind = parameter.kind
        if kind is griffe.ParameterKind.keyword_only and not star_written:
            parts.append("*")
            star_written = True
        text = parameter.name
        if kind is griffe.ParameterKind.var_positional:
            text, star_written = f"*{text}", True
        elif kind is griffe.ParameterKind.var_keyword:
            text = f"**{text}"
        if parameter.annotation is not None:
            text += f": {parameter.annotation}"
        if parameter.default is not None and kind not in _VARIADIC:
            text += f" = {parameter.default}"
        parts.append(text)
        following = function.parameters[i + 1].kind if i + 1 < len(function.parameters) else None
        if kind is griffe.ParameterKind.positional_only and following is not kind:
            parts.append("/")
    return ", ".join(parts)


def _function(name: str, function: griffe.Function) -> str:
    prefix = "async def" if "async" in function.labels else "def"
    returns = f" -> {function.returns}" if function.returns is not None else ""
    return f"{prefix} {name}({_parameters(function)}){returns}"


def _lines(name: str, obj: griffe.Object, indent: str = "") -> Iterator[str]:
    if isinstance(obj, griffe.Class):
        bases = f"({', '.join(str(base) for base in obj.bases)})" if obj.bases else ""
        yield f"{indent}class {name}{bases}"
        for member_name in sorted(obj.all_members):
            if member_name.startswith("_") and member_name not in _PUBLIC_DUNDERS:
                continue
            yield from _lines(member_name, _resolved(obj.all_members[member_name]), indent + "    ")
    elif isinstance(obj, griffe.Function):
        yield indent + _function(name, obj)
    elif isinstance(obj, griffe.Attribute):
        annotation = f": {obj.annotation}" if obj.annotation is not None else ""
        # a module-level value is a type alias or a constant a plugin compares with; a class
        # attribute's value is a default, behaviour rather than surface
        shows_value = not indent and obj.value is not None and name != "PLUGIN_API_VERSION"
        value = f" = {obj.value}" if shows_value else ""
        yield f"{indent}{name}{annotation}{value}"
    else:
        yield f"{indent}{obj.kind.value} {name}"


def surface() -> list[str]:
    """One line per export and per public member, in name order."""
    import xpeval.plugin  # the run-time `__all__`: griffe cannot read a computed one

    module = griffe.load("xpeval.plugin", search_paths=[ROOT], resolve_aliases=True, resolve_external=False)
    assert isinstance(module, griffe.Module)
    lines: list[str] = []
    for name in sorted(xpeval.plugin.__all__):
        if name not in module.members:
            lines.append(f"{name}  # not visible to type checkers (the TYPE_CHECKING block)")
            continue
        lines.extend(_lines(name, _export(module.members[name])))
    return lines


def current_version() -> str:
    import xpeval.plugin

    return ".".join(str(part) for part in xpeval.plugin.PLUGIN_API_VERSION)


def read_snapshot(path: Path = SNAPSHOT) -> tuple[str, list[str]]:
    """The version the snapshot was taken at, and its surface lines."""
    first, *lines = path.read_text(encoding="utf-8").splitlines()
    if not first.startswith(VERSION_LINE):
        raise ValueError(f"{path}: the first line must be `{VERSION_LINE}MAJOR.MINOR`")
    return first.removeprefix(VERSION_LINE), lines


def refusal(old_version: str, old: list[str], new_version: str, new: list[str]) -> str | None:
    """Why `new` may not replace `old` as the recorded surface, or None. A minor step only adds;
    anything removed or changed takes a major step (docs/plugin-api.md, "Versioning")."""
    if old == new:
        return None
    old_major, old_minor = (int(part) for part in old_version.split("."))
    new_major, new_minor = (int(part) for part in new_version.split("."))
    removed = sorted(line for line in set(old) - set(new) if not _widened(line, new))
    if (new_major, new_minor) <= (old_major, old_minor):
        return f"the plugin API's surface changed and PLUGIN_API_VERSION is still {new_version}"
    if removed and new_major == old_major:
        shown = "\n  ".join(removed[:10])
        return (
            f"names or signatures were removed or changed under a minor step ({old_version} -> "
            f"{new_version}); that takes a major one:\n  {shown}"
        )
    return None


def _widened(line: str, new: list[str]) -> bool:
    """Whether `new` holds `line`'s signature with parameters added after its own, each with a
    default: every call of the old one calls the new one unchanged (a minor step's addition)."""
    head, paren, tail = line.rpartition(")")
    if not paren or "(" not in head:
        return False
    for candidate in new:
        if candidate != line and candidate.startswith(head) and candidate.endswith(paren + tail):
            extra = candidate[len(head) : len(candidate) - len(paren + tail)]
            if not head.endswith("("):
                if not extra.startswith(", "):
                    continue
                extra = extra[2:]
            if extra and all(" = " in part and not part.startswith("*") for part in _top_level(extra)):
                return True
    return False


def _top_level(parameters: str) -> list[str]:
    """`a: X, b: dict[str, int] = {}` as its parameters (commas inside brackets kept)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(parameters):
        depth += char in "[({"
        depth -= char in "])}"
        if char == "," and depth == 0:
            parts.append(parameters[start:index].strip())
            start = index + 1
    return [*parts, parameters[start:].strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help=f"rewrite {SNAPSHOT.name}")
    args = parser.parse_args(argv)
    new = surface()
    if not args.update:
        print("\n".join(new))
        return 0
    old_version, old = read_snapshot()
    why = refusal(old_version, old, current_version(), new)
    if why is not None:
        print(f"not updated: {why}", file=sys.stderr)
        return 1
    SNAPSHOT.write_text("\n".join([VERSION_LINE + current_version(), *new]) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)} ({len(new)} lines, PLUGIN_API_VERSION {current_version()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
