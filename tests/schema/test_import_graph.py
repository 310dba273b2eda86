"""The import graph of `xpeval` has no cycle, the rooms import in one direction, and the checker
is independent.

Built with `ast` from every `import` / `from ... import` statement anywhere in a module: at
module level, under `if TYPE_CHECKING:` and inside functions (an import moved into a function
to dodge a cycle is still a cycle). `from package import name` is an edge to
`package.name` when that is a module, else to `package`; importing a submodule is not counted
as importing its parent package's `__init__` (Python runs it, but it cannot close a cycle that
the explicit edges do not).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("adapters", "evals")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(["xpeval", *parts])] = path
    return found


def imported_modules(module: str, is_package: bool, source: str, known: set[str]) -> set[str]:
    """The modules in `known` that `source` (the text of `module`) imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if name:
                    found.add(name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    found.discard(module)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {
        name: imported_modules(name, path.name == "__init__.py", path.read_text(encoding="utf-8"), known)
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (its modules in order, the first repeated at the end), or None."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        path.append(start)
        on_path.add(start)
        while stack:
            current, pending = stack[-1]
            if not pending:
                stack.pop()
                path.pop()
                on_path.discard(current)
                done.add(current)
                continue
            nxt = pending.pop()
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in done:
                stack.append((nxt, sorted(graph[nxt])))
                path.append(nxt)
                on_path.add(nxt)
    return None


def test_function_level_and_type_checking_imports_count() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import b\n"
        "def f():\n    import pkg.c.d\n    from . import e\n"
    )
    known = {"pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.e"}
    assert imported_modules("pkg.a", False, source, known) == {"pkg.b", "pkg.c", "pkg.e"}


def test_a_cycle_is_found_and_named() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_import_graph_of_adapters_and_evals_has_no_cycle() -> None:
    graph = _graph()
    assert (
        "xpeval.adapters.schema._engine" in graph["xpeval.adapters.schema._rules"]
    )  # the graph is not empty
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_the_checker_imports_nothing_from_the_passes() -> None:
    """The judge must not share code with what it judges (evals/acceptance/checker/RULES.md)."""
    for module, imports in _graph().items():
        if module == "xpeval.evals.acceptance.checker" or module.startswith(
            "xpeval.evals.acceptance.checker."
        ):
            passes = sorted(
                m for m in imports if m == "xpeval.adapters.schema" or m.startswith("xpeval.adapters.schema.")
            )
            assert not passes, f"{module} imports {passes}"


def test_the_passes_import_nothing_from_evals() -> None:
    """The passes run on the request path; the measurement depends on them, never the reverse."""
    for module, imports in _graph().items():
        if module.startswith("xpeval.adapters.schema"):
            assert not [m for m in imports if m.startswith("xpeval.evals")], module


STORAGE = ("xpeval.evals.results", "xpeval.evals.cassettes")
"""Rooms that keep what runs leave behind; they are read by running, the verdict and reports."""


def _in(module: str, room: str) -> bool:
    return module == room or module.startswith(room + ".")


def test_storage_never_imports_running_or_the_verdict() -> None:
    """Results and cassettes are read by every stage; they must not reach up into one
    (docs/ARCHITECTURE.md, "The boundaries")."""
    offending = {
        module: sorted(m for m in imports if _in(m, "xpeval.evals.running") or _in(m, "xpeval.evals.verdict"))
        for module, imports in _graph().items()
        if any(_in(module, room) for room in STORAGE)
    }
    assert not {m: i for m, i in offending.items() if i}


def test_the_verdict_never_imports_running() -> None:
    """The verdict judges what a run wrote; it never plays anything itself."""
    offending = {
        module: sorted(m for m in imports if _in(m, "xpeval.evals.running"))
        for module, imports in _graph().items()
        if _in(module, "xpeval.evals.verdict")
    }
    assert not {m: i for m, i in offending.items() if i}


def test_nothing_imports_the_repository_folders_by_their_own_names() -> None:
    """adapters/ and evals/ are `xpeval.adapters` and `xpeval.evals`: a bare `import evals` in the
    checkout would load a second copy of every module (and in a user's project, their own)."""
    bare: list[str] = []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            bare.extend(f"{module}: {n}" for n in names if n.split(".")[0] in ("adapters", "evals"))
    assert not bare
