"""`xpeval cases validate` and every command that loads cases list every problem of every case
file at once, in the file's own terms (file, case, field as written, what is wrong, what is
allowed), bounded, then their count (issue 36, point 7)."""

from __future__ import annotations

from pathlib import Path

from tests._cli import Cli
from tests._shop import shop_project

THREE_MISTAKES = """
cases:
  - id: orders_simple_02
    category: simpel
    tools:
      - name: lookup_order
        parameters: {type: object, properties: {order: {type: string}}, required: [order]}
    messages:
      - {role: user, content: "Where is A1234?"}
    expected:
      calls:
        - name: lookup_order
          arguments: {order: A1234}
  - id: orders_simple_03
    category: simple
    tools:
      - name: lookup_order
        parameters: {type: object, properties: {order: {type: string}}, required: [order]}
    messages:
      - {role: user, content: "Where is B7?"}
    expected:
      calls:
        - name: lookup_order
          argumnets: {order: ["B7"]}
"""


def _broken_shop(tmp_path: Path) -> Path:
    root = shop_project(tmp_path, 'cases = "evals/cases"\n')
    (root / "evals" / "cases" / "more.yaml").write_text(THREE_MISTAKES)
    (root / "evals" / "cases" / "imported.jsonl").write_text("{not json\n")
    return root


def test_validate_lists_every_problem_of_every_file_in_the_case_files_terms(tmp_path: Path, cli: Cli) -> None:
    root = _broken_shop(tmp_path)
    done = cli("cases", "validate", "evals/cases", cwd=root)
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    said = "\n".join(lines)
    # Two mistakes in one case, one in the next, one in another file: all in one round.
    assert 'more.yaml: case 0 (orders_simple_02): category: got "simpel"' in said
    assert "'simple'" in said  # what is allowed
    assert (
        'more.yaml: case 0 (orders_simple_02): expected.calls[0].arguments.order: "A1234" is a single value; '
        'an expected argument is a list of acceptable values: write ["A1234"]'
    ) in said
    assert (
        "more.yaml: case 1 (orders_simple_03): expected.calls[0].argumnets: "
        "unknown field (did you mean 'arguments'?)" in said
    )
    assert "imported.jsonl: line 1: invalid JSON" in said
    assert "Input should be a valid list" not in said and "calls.0." not in said
    assert lines[-1] == "xpeval: 4 problems in 2 case file(s)"


def test_a_run_on_a_broken_case_folder_fails_with_the_same_full_list(tmp_path: Path, cli: Cli) -> None:
    root = _broken_shop(tmp_path)
    done = cli("run", "--no-progress", "--no-baseline", cwd=root)
    assert done.returncode == 2, done.stderr
    assert "expected.calls[0].arguments.order" in done.stderr
    assert "expected.calls[0].argumnets: unknown field" in done.stderr
    assert "imported.jsonl: line 1: invalid JSON" in done.stderr
    assert "4 problems in 2 case file(s)" in done.stderr
    assert not (root / "reports").exists() or not any((root / "reports").iterdir())


def test_ten_thousand_broken_cases_print_a_bounded_list_and_the_whole_count(tmp_path: Path, cli: Cli) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\n')
    bad = '{"id": "c%d", "category": "nonsense", "messages": "hi", "expected": 3, "extra": 1}\n'
    (root / "evals" / "cases" / "bulk.jsonl").write_text("".join(bad % n for n in range(10_000)))
    done = cli("cases", "validate", "evals/cases", cwd=root)
    lines = done.stderr.splitlines()
    assert done.returncode == 2
    assert len(lines) < 60, len(lines)
    assert any(
        line.startswith("xpeval: bulk.jsonl: and ") and line.endswith(" more problems") for line in lines
    )
    assert lines[-1].startswith("xpeval: 40000 problems in 1 case file(s)"), lines[-1]


RULES_BROKEN_TWICE = """
cases:
  - id: orders_simple_04
    category: simple
    tools:
      - name: lookup_order
        parameters: {type: object, properties: {order: {type: string}}, required: [order]}
    approvals: {refund_order: approve}
    messages:
      - {role: user, content: "Where are A1 and B2?"}
    expected:
      calls:
        - name: lookup_order
          arguments: {order: ["A1"], detail: ["full"]}
        - name: lookup_order
          arguments: {}
"""


def test_a_case_breaking_several_rules_that_relate_its_fields_gets_every_one_in_one_round(
    tmp_path: Path, cli: Cli
) -> None:
    """The rules relating fields stopped at the first (an unknown approval hid the rest)."""
    root = shop_project(tmp_path, 'cases = "evals/cases"\n')
    (root / "evals" / "cases" / "more.yaml").write_text(RULES_BROKEN_TWICE)

    done = cli("cases", "validate", "evals/cases", cwd=root)

    assert done.returncode == 2, done.stderr
    case = "more.yaml: case 0 (orders_simple_04): "
    for problem in (
        "approvals.refund_order: not a tool of this case",
        "expected.calls[0].arguments.detail: not in the schema of 'lookup_order'",
        "expected.calls[1].arguments: 'lookup_order' requires 'order', which is missing",
        "category simple: expects exactly one call in one turn",
    ):
        assert any(line.endswith(case + problem) for line in done.stderr.splitlines()), (problem, done.stderr)
    assert "xpeval: 4 problems in 1 case file(s)" in done.stderr, done.stderr
