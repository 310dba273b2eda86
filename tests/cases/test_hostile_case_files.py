"""A case file is untrusted input (any pull request can add one): an alias bomb, a file far above
the input cap, an alias to itself or JSON nested past Python's limits are one line naming the
file and exit 2, through the real CLI, in seconds — never a hang, a traceback or gigabytes.
The caps are the project's: `[tool.xpeval]` raises them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._cli import without_project_line, xpeval
from tests._hostile import case_file_bomb_in_arguments, case_file_bomb_in_schema, sparse_file
from xpeval.errors import UserError
from xpeval.evals.cases import BUILTIN_DIR, load_case_file
from xpeval.evals.untrusted import MB, InputLimits

HANG = 120.0
"""Seconds after which a command counts as hung (before the fix these ran past 1.3 GB, for ever)."""


def only_line(stderr: str) -> str:
    """The one line a refusal is, after the line naming the project."""
    lines = [line for line in without_project_line(stderr).splitlines() if line.strip()]
    assert len(lines) == 1, stderr[-2000:]
    assert "Traceback" not in stderr
    return lines[0]


def case_folder(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "cases"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_an_alias_bomb_in_a_case_file_is_refused_by_cases_validate(tmp_path: Path) -> None:
    folder = case_folder(tmp_path, "bomb.yaml", case_file_bomb_in_arguments())
    assert (folder / "bomb.yaml").stat().st_size < 1024
    run = xpeval("cases", "validate", str(folder), timeout=HANG)
    assert run.returncode == 2
    line = only_line(run.stderr)
    assert "bomb.yaml" in line and "aliases expand it past 100,000 YAML nodes" in line
    assert "raise max_yaml_nodes in [tool.xpeval]" in line


def test_an_alias_bomb_that_once_passed_validation_is_refused_before_a_run(tmp_path: Path) -> None:
    folder = case_folder(tmp_path, "bomb.yaml", case_file_bomb_in_schema())
    run = xpeval(
        "run",
        "--case-dir",
        str(folder),
        "--adapters",
        "openai-chat",
        "--mode",
        "live",
        "--target",
        "emulator",
        "--no-progress",
        "--results",
        str(tmp_path / "results.jsonl"),
        "--reports",
        str(tmp_path / "reports"),
        timeout=HANG,
    )
    assert run.returncode == 2
    assert "bomb.yaml: case file refused" in only_line(run.stderr)
    assert not (tmp_path / "results.jsonl").exists(), "refused before any episode"


def test_a_200_mb_case_file_is_refused_from_its_size(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    sparse_file(folder / "huge.yaml", 200 * MB)
    run = xpeval("cases", "validate", str(folder), timeout=HANG)
    assert run.returncode == 2
    assert only_line(run.stderr) == (
        "xpeval: huge.yaml: case file refused: 200 MB, above the 32 MB cap on an input file "
        "(raise max_input_mb in [tool.xpeval] if it is genuine)"
    )


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("itself.yaml", "cases: &a [*a]\n", "refers to a node that holds it"),
        ("deep.jsonl", "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        (
            "deep_case.jsonl",
            '{"id": "deep_simple_01", "category": "simple", "tools": [{"name": "f", "parameters": '
            '{"type": "object", "examples": ' + "[" * 900 + "]" * 900 + "}}]}\n",
            "nested too deeply",
        ),
    ],
)
def test_a_self_referencing_or_endlessly_nested_case_file_is_one_line(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    folder = case_folder(tmp_path, name, text)
    run = xpeval("cases", "validate", str(folder), timeout=HANG)
    assert run.returncode == 2
    line = only_line(run.stderr)
    assert name in line and says in line


def test_the_projects_tool_xpeval_table_sets_both_caps(tmp_path: Path) -> None:
    builtin = (BUILTIN_DIR / "calc.yaml").read_text(encoding="utf-8")
    padded = builtin + "# " + "x" * (2 * MB) + "\n"
    folder = case_folder(tmp_path, "calc.yaml", padded)

    def validate(table: str) -> tuple[int, str]:
        (tmp_path / "pyproject.toml").write_text(f"[tool.xpeval]\n{table}\n", encoding="utf-8")
        run = xpeval("cases", "validate", str(folder), cwd=tmp_path, timeout=HANG)
        return run.returncode, run.stdout + run.stderr

    code, said = validate("max_input_mb = 1")
    assert code == 2 and "2 MB, above the 1 MB cap" in said
    code, said = validate("max_input_mb = 3\nmax_yaml_nodes = 500")
    assert code == 2 and "more than 500 YAML nodes" in said
    code, said = validate("max_input_mb = 3")
    assert code == 0 and "are valid" in said
    code, said = validate("max_input_mb = -1")
    assert code == 2 and "max_input_mb must be a positive number" in said


def test_every_built_in_case_file_is_well_inside_the_default_caps() -> None:
    tight = InputLimits(max_bytes=64 * 1024, max_yaml_nodes=5_000)
    for path in sorted(BUILTIN_DIR.glob("*.yaml")):
        assert load_case_file(path, limits=tight), path


def test_a_case_file_at_the_node_budget_is_read_and_one_past_it_is_refused(tmp_path: Path) -> None:
    text = (BUILTIN_DIR / "calc.yaml").read_text(encoding="utf-8")
    path = tmp_path / "calc.yaml"
    path.write_text(text, encoding="utf-8")
    from xpeval.evals.cases.loader import _CaseYamlLoader
    from xpeval.evals.untrusted import count_nodes

    nodes = count_nodes(text, _CaseYamlLoader, 10**9)
    assert load_case_file(path, limits=InputLimits(max_yaml_nodes=nodes))
    with pytest.raises(UserError, match=f"more than {nodes - 1:,} YAML nodes|aliases expand it past"):
        load_case_file(path, limits=InputLimits(max_yaml_nodes=nodes - 1))


JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


def expanded_nodes(value: object) -> int:
    """Nodes of a loaded document with every shared object counted again (aliases expanded)."""
    if isinstance(value, dict):
        return 1 + sum(expanded_nodes(k) + expanded_nodes(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(expanded_nodes(item) for item in value)
    return 1


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(JSON_LIKE, min_size=1, max_size=4), reuse=st.lists(st.integers(0, 3), max_size=6))
def test_the_node_count_is_exact_and_the_quick_bound_never_below_it(
    parts: list[object], reuse: list[int]
) -> None:
    import yaml

    from xpeval.evals.cases.loader import _CaseYamlLoader
    from xpeval.evals.untrusted import count_nodes, node_bound

    shared = [parts[i % len(parts)] for i in reuse]  # the same objects again: dumped as aliases
    document = {"parts": parts, "again": shared}
    for flow in (False, True, None):
        text = yaml.safe_dump(document, default_flow_style=flow)
        nodes = count_nodes(text, _CaseYamlLoader, 10**9)
        assert nodes == expanded_nodes(yaml.load(text, Loader=_CaseYamlLoader))
        if "&" not in text:
            assert node_bound(text) >= nodes
