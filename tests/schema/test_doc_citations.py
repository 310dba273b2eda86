"""What the schema passes and the acceptance checker cite is inside the repository, and exists.

- No comment or docstring cites a document outside the repository (the shared folder beside a
  checkout, its docs, a numbered seed design note, the rules document by its bare file name):
  a clone has none of them (`OUTSIDE` lists the patterns). Rules are cited as
  `docs/provider-schema-rules.md §N`, design decisions as the folder's `RULES.md`.
- Every `§N` (or `§N.M`, an item of section N's numbered list) cited exists in that document.
- Every checker rule's `source` starts with its evidence tag and cites nothing outside the repo.
- Every test a `RULES.md` names exists.

The first rule holds for every Python file of the repository (`EVERYWHERE`); the corpus the tests
read data from (`../shared/corpus`, skipped where absent) is data, not a citation. The section
rules are scoped to the folders that cite the rules document (`SCOPE`).
"""

from __future__ import annotations

import ast
import importlib
import io
import pkgutil
import re
import tokenize
from pathlib import Path

import pytest

from xpeval.evals.acceptance.checker import Rule

REPO = Path(__file__).resolve().parents[2]
SCOPE = (
    "adapters/schema",
    "evals/acceptance/checker",
    "tests/schema",
    "tests/acceptance",
    "tests/fidelity",
    "benchmarks/schema_passes.py",
)
RULES_DOCS = (REPO / "adapters/schema/RULES.md", REPO / "evals/acceptance/checker/RULES.md")
DOC = REPO / "docs/provider-schema-rules.md"
EVERYWHERE = ("adapters", "evals", "tests", "benchmarks", "bfcl", ".ci", "noxfile.py", "conftest.py")
OUTSIDE = re.compile(
    r"\.\./shared(?!/corpus)|shared/docs|\bseeds? 0\d\d|\brules doc\b|(?<!docs/)provider-schema-rules\.md",
    re.IGNORECASE,
)
SECTION = re.compile(r"§(\d+)(?:\.(\d+))?")


def _python_files() -> list[Path]:
    files: list[Path] = []
    for entry in SCOPE:
        path = REPO / entry
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def _comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and of every string that stands alone as a statement
    (module, class, function and attribute docstrings)."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.append((node.lineno, node.value.value))
    return found


def _sections() -> dict[int, set[int]]:
    """Section number -> the numbers of its numbered-list items."""
    sections: dict[int, set[int]] = {}
    current: set[int] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"## (\d+)\. ", line)
        if heading:
            current = sections.setdefault(int(heading.group(1)), set())
        elif current is not None and (item := re.match(r"(\d+)\. ", line)):
            current.add(int(item.group(1)))
    return sections


def _missing_sections(text: str) -> list[str]:
    sections = _sections()
    missing = []
    for match in SECTION.finditer(text):
        number, item = int(match.group(1)), match.group(2)
        if number not in sections or (item is not None and int(item) not in sections[number]):
            missing.append(match.group(0))
    return missing


def _rules() -> list[Rule]:
    import xpeval.evals.acceptance.checker as package

    found: list[Rule] = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        found.extend(value for value in vars(module).values() if isinstance(value, Rule))
    found.extend(value for value in vars(package).values() if isinstance(value, Rule))
    return found


def test_the_scope_exists_and_the_pattern_catches_what_it_should() -> None:
    assert all((REPO / entry).exists() for entry in SCOPE)
    for text in (
        "see ../shared/docs/x.md",
        "seed 002's decision",
        "rules doc §3",
        "`provider-schema-rules.md`",
        "(seeds 000, 004)",
    ):
        assert OUTSIDE.search(text), text
    assert not OUTSIDE.search("every real recording in ../shared/corpus/cassettes")
    assert not OUTSIDE.search("docs/provider-schema-rules.md §3; adapters/schema/RULES.md")


def _every_python_file() -> list[Path]:
    files: list[Path] = []
    for entry in EVERYWHERE:
        path = REPO / entry
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


@pytest.mark.parametrize("path", _every_python_file(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_comment_cites_a_document_outside_the_repository(path: Path) -> None:
    for line, text in _comments_and_docstrings(path.read_text(encoding="utf-8")):
        match = OUTSIDE.search(text)
        assert match is None, f"{path.relative_to(REPO)}:{line} cites {match.group(0)!r}"


SHIPPED = ("adapters", "evals", "xpeval")
WORKSPACE = re.compile(r"\.\./shared")
"""The folder beside this checkout: shipped code (its comments, docstrings and help texts alike)
never names it, not even the corpus the repository's tests read: a user's clone has none."""


def test_no_shipped_module_names_the_folder_beside_the_checkout() -> None:
    files = [path for folder in SHIPPED for path in sorted((REPO / folder).rglob("*.py"))]
    assert len(files) > 200
    named = [
        f"{path.relative_to(REPO)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if WORKSPACE.search(line)
    ]
    assert named == []


@pytest.mark.parametrize("path", [*_python_files(), *RULES_DOCS, DOC], ids=lambda p: str(p.relative_to(REPO)))
def test_every_cited_section_of_the_rules_document_exists(path: Path) -> None:
    assert _missing_sections(path.read_text(encoding="utf-8")) == [], path


def test_the_rules_document_keeps_its_sections_and_the_checklist_items() -> None:
    sections = _sections()
    assert sorted(sections) == list(range(1, 17))  # §14 Mistral, §15 Cohere v2, §16 Bedrock: at the end
    assert sections[13] == set(range(1, 10))


def test_every_checker_rule_cites_evidence_inside_the_repository() -> None:
    rules = _rules()
    assert len(rules) > 40  # every provider module was found
    for rule in rules:
        assert rule.source.startswith("["), rule
        assert OUTSIDE.search(rule.source) is None, rule
        assert _missing_sections(rule.source) == [], rule


def test_every_test_a_rules_file_names_exists() -> None:
    defined = {
        node.name
        for path in (REPO / "tests").rglob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    for doc in RULES_DOCS:
        text = doc.read_text(encoding="utf-8")
        for path in re.findall(r"`(tests/[\w/]+\.py)", text):
            assert (REPO / path).is_file(), f"{doc.name} names {path}"
        named = set(re.findall(r"`(?:tests/[\w/]+\.py)?(?:::)?(test_\w+)`", text))
        assert named, doc
        assert named <= defined, (
            f"{doc.relative_to(REPO)} names tests that do not exist: {sorted(named - defined)}"
        )
