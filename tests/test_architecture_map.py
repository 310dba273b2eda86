"""docs/ARCHITECTURE.md's map is the tree: every package and public module of `adapters/`,
`evals/` and `xpeval/` is on it, everything on it exists, each question a newcomer asks
points at one module that exists, and each of the three walks (a replayed episode's answer, the
gate's decision, a plugin wire's registration) names at most six modules that exist, each with
a name it defines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "ARCHITECTURE.md"
MAPPED = ("xpeval", "adapters", "evals")
"""The folders whose every package and public module the map names (private `_x.py` may be left
out; data folders, listed with a trailing `/`, are named but not expanded)."""


DESCRIPTION_COLUMN = 24
"""Map lines indented this far continue the description above them."""


def _map_block() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The rooms", 1)[1]
    return section.split("```", 2)[1].splitlines()[1:]


def _mapped_paths() -> set[str]:
    """Every path the map names, from its indentation (two spaces per level)."""
    paths: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in _map_block():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent >= DESCRIPTION_COLUMN:
            continue  # a description carried on to the next line
        names = re.match(r"\s*([\w./-]+(?:,\s*[\w./-]+)*)", line)
        assert names, f"unreadable map line: {line!r}"
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        last = ""
        for name in (n.strip() for n in names.group(1).split(",")):
            path = f"{parent}{name}"
            paths.add(path.rstrip("/"))
            last = path
        if last.endswith("/"):
            stack.append((indent, last))
    return paths


def _tree() -> set[str]:
    """Every package and public module under the mapped folders, as repository paths."""
    found: set[str] = set()
    for top in MAPPED:
        root = REPO / top
        found.add(top)
        for path in root.rglob("*"):
            if path.is_symlink():
                continue  # xpeval/adapters and xpeval/evals: the mapped folders themselves
            relative = path.relative_to(REPO)
            if "__pycache__" in relative.parts or any(p.startswith(".") for p in relative.parts):
                continue
            if (path.is_dir() and (path / "__init__.py").exists()) or (
                path.suffix == ".py" and not path.name.startswith("_")
            ):
                found.add(relative.as_posix())
    return found


def test_every_package_and_public_module_is_on_the_map() -> None:
    mapped = _mapped_paths()
    data_folders = {p for p in mapped if (REPO / p).is_dir() and not (REPO / p / "__init__.py").exists()}
    missing = sorted(
        path for path in _tree() - mapped if not any(path.startswith(f + "/") for f in data_folders)
    )
    assert not missing, f"on disk but not in docs/ARCHITECTURE.md's map: {missing}"


def test_everything_on_the_map_exists() -> None:
    gone = sorted(path for path in _mapped_paths() if not (REPO / path).exists())
    assert not gone, f"in docs/ARCHITECTURE.md's map but not on disk: {gone}"


def test_each_question_points_at_one_module_that_exists() -> None:
    section = DOC.read_text(encoding="utf-8").split("## Where to look", 1)[1].split("\n## ", 1)[0]
    answers = re.findall(r"^- \*\*(.+?)\*\*: `([\w/.]+\.py)`", section, re.M)
    assert len(answers) >= 3, "the 'Where to look' section names a module per question"
    for question, module in answers:
        assert (REPO / module).is_file(), f"{question!r} points at {module}, which does not exist"


WALKS = (
    "How a replayed episode gets its answer",
    "How the gate decides",
    "How a plugin wire is registered and used",
)
"""The questions docs/ARCHITECTURE.md answers as a walk through the modules, in order."""
MOST_MODULES = 6


def _walks() -> dict[str, str]:
    """Each walk's question and its text."""
    section = DOC.read_text(encoding="utf-8").split("## Three walks through the house", 1)[1]
    parts = re.split(r"^### (.+)$", section.split("\n## ", 1)[0], flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def _defines(module: Path, name: str) -> bool:
    """Whether `module` defines `name` (a function, class or assigned name) or `Class.member`."""
    body = ast.parse(module.read_text(encoding="utf-8")).body
    for part in name.split("."):
        found = [node for node in body if part in _names_of(node)]
        if not found:
            return False
        body = getattr(found[0], "body", [])
    return True


def _names_of(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def test_each_walk_names_at_most_six_modules_that_exist() -> None:
    walks = _walks()
    assert [q for q in WALKS if q not in walks] == [], f"walks missing from docs/ARCHITECTURE.md: {walks}"
    for question in WALKS:
        named = set(re.findall(r"`([\w/.-]+\.py)`", walks[question]))
        assert 1 <= len(named) <= MOST_MODULES, f"{question!r} names {len(named)} modules: {sorted(named)}"
        gone = sorted(m for m in named if not (REPO / m).is_file())
        assert not gone, f"{question!r} names {gone}, which do not exist"


def test_each_step_of_a_walk_is_a_module_and_what_to_read_in_it() -> None:
    for question, text in _walks().items():
        steps = re.findall(r"^\d+\. (.*)$", text, re.M)
        assert steps, f"{question!r} has no numbered steps"
        for step in steps:
            named = re.match(r"`([\w/.-]+\.py)`(?: `([\w.]+)`)?", step)
            assert named, f"{question!r}: a step that does not start with its module: {step!r}"
            module, name = named.groups()
            if name is not None:
                assert _defines(REPO / module, name), f"{question!r}: {module} defines no {name}"
