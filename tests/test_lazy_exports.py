"""Every package that imports its public names lazily (`xpeval/_lazy.py`) writes each name twice:
in `_EXPORTS` (what `__getattr__` imports at run time) and in its `if TYPE_CHECKING:` block (what
mypy and IDEs see). Nothing but this test holds the two together, with `__all__` derived from
`_EXPORTS`: a name missing from the block is `Any` to every type checker, and one missing from
`_EXPORTS` is an AttributeError at run time."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The source folders and the module names they are imported under (docs/ARCHITECTURE.md, "One
# import name"); xpeval/adapters and xpeval/evals are links to the first two.
SOURCE_ROOTS = {"adapters": "xpeval.adapters", "evals": "xpeval.evals", "xpeval": "xpeval"}


@dataclass(frozen=True)
class LazyPackage:
    module: str
    tree: ast.Module

    def assigned(self, name: str) -> ast.expr:
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                return node.value
        raise AssertionError(f"{self.module} assigns no {name}")

    def exports(self) -> dict[str, str]:
        """`_EXPORTS` as name -> "module:attribute"."""
        table = ast.literal_eval(self.assigned("_EXPORTS"))
        return {name: where if ":" in where else f"{where}:{name}" for name, where in table.items()}

    def type_checking_exports(self) -> dict[str, str]:
        """The names the `if TYPE_CHECKING:` block exports, as name -> "module:attribute": a
        `from m import a as a` (mypy's explicit re-export), or `b = a` of a name it imported."""
        block = [
            node
            for node in self.tree.body
            if isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ]
        assert len(block) == 1, f"{self.module} has {len(block)} `if TYPE_CHECKING:` blocks"
        imported: dict[str, str] = {}
        exported: dict[str, str] = {}
        for node in block[0].body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    where = f"{node.module}:{alias.name}"
                    imported[alias.asname or alias.name] = where
                    if alias.asname == alias.name:
                        exported[alias.name] = where
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                for target in node.targets:
                    assert isinstance(target, ast.Name)
                    exported[target.id] = imported[node.value.id]
        return exported

    def own_public_names(self) -> set[str]:
        """Public names the package binds itself (plugin.py's PLUGIN_API_VERSION, compatible)."""
        names: set[str] = set()
        for node in self.tree.body:
            if isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
        return {n for n in names if not n.startswith("_")}


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT)
    parts = [SOURCE_ROOTS[relative.parts[0]], *relative.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _calls_lazy_exports(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "lazy_exports"
    )


def _lazy_packages() -> list[LazyPackage]:
    found = []
    for folder in SOURCE_ROOTS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.is_relative_to(ROOT / "xpeval") and path.parent != ROOT / "xpeval":
                continue  # xpeval/adapters, xpeval/evals are the links; xpeval/bundled is not lazy
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(_calls_lazy_exports(node) for node in tree.body):
                found.append(LazyPackage(_module_name(path), tree))
    return found


PACKAGES = _lazy_packages()


def test_every_lazy_package_is_found() -> None:
    # the issue counted 11 packages; a rename that hides them from the scan must not pass quietly
    assert len(PACKAGES) >= 11
    assert {"xpeval", "xpeval.plugin", "xpeval.adapters"} <= {p.module for p in PACKAGES}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.module)
def test_the_type_checking_block_names_each_export_from_its_module(package: LazyPackage) -> None:
    assert package.type_checking_exports() == package.exports()


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.module)
def test_all_lists_the_exports_and_each_resolves_to_its_module_attribute(package: LazyPackage) -> None:
    module = importlib.import_module(package.module)
    names = module.__all__
    assert len(names) == len(set(names))
    assert set(names) == set(package.exports()) | package.own_public_names()
    for name, where in package.exports().items():
        source, _, attribute = where.partition(":")
        assert getattr(module, name) is getattr(importlib.import_module(source), attribute), name
    assert set(package.exports()) <= set(dir(module))


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.module)
def test_no_export_is_named_as_a_submodule_of_its_package(package: LazyPackage) -> None:
    # Importing a submodule binds its name on the package: an export of the same name would be
    # the module, not the export, for whoever imports it after the submodule was imported
    # elsewhere (`xpeval schemas` once crashed with "'module' object is not callable" that way).
    module = importlib.import_module(package.module)
    submodules = {info.name for info in pkgutil.iter_modules(getattr(module, "__path__", []))}
    assert sorted(set(package.exports()) & submodules) == []
