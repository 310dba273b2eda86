"""`xpeval compare` and `xpeval gate --reference`: rows judged against a reference row on the
same episodes; a vendor that drops the model's tool calls fails, one that serves it alike passes."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests._cli import Cli
from tests.vendors._vendors import dropping_calls, perfect, run_vendors
from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.report.vendors import vendor_verdicts
from xpeval.evals.verdict.reference import Answer, compare_rows, f1_bootstrap, judge

SINGLE_TURN = [
    c.case for c in load_cases() if c.case.category in ("simple", "multiple", "parallel", "irrelevance")
]
REFERENCE = "openai-compatible=qwen2.5-coder-1.5b-instruct"


@pytest.fixture(scope="module")
def vendors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_vendors(
        tmp_path_factory.mktemp("vendors") / "results.jsonl",
        SINGLE_TURN,
        {"openai-compatible": perfect, "moonshot": perfect, "anthropic-messages": dropping_calls},
    )


def test_a_vendor_that_drops_tool_calls_fails_against_the_reference(
    vendors: Path, tmp_path: Path, cli: Cli
) -> None:
    done = cli("compare", str(vendors), "--reference", REFERENCE, "--out", str(tmp_path))
    assert done.returncode == 1, done.stderr
    table = pd.read_csv(tmp_path / "compare.csv").set_index("adapter")
    calling = sum(1 for c in SINGLE_TURN if c.expected is not None and not c.expected.no_call)
    dropped = table.loc["anthropic-messages"]
    assert (dropped["tp"], dropped["fn"], dropped["fp"]) == (0, calling, 0)
    assert dropped["recall"] == 0 and not dropped["passed"]
    assert dropped["p_trigger"] < 0.05
    assert "calls a tool less often" in dropped["failures"]
    same = table.loc["moonshot"]
    assert (same["f1"], same["agreement"], same["passed"]) == (1.0, 1.0, True)
    assert math.isnan(same["p_trigger"]), "no discordant episode: no test made"
    printed = done.stdout
    assert (
        "| local-model | anthropic-messages | qwen2.5-coder-1.5b-instruct |" in printed and "FAIL" in printed
    )
    assert (tmp_path / "compare.md").read_text() == printed


def test_gate_with_a_reference_fails_the_vendor_that_drops_calls_and_names_it(
    vendors: Path, cli: Cli
) -> None:
    done = cli("gate", "--results", str(vendors), "--reference", REFERENCE)
    assert done.returncode == 1, done.stderr
    dropped = "local-model|anthropic-messages|qwen2.5-coder-1.5b-instruct"
    assert f"FAIL {dropped} against local-model|openai-compatible|" in done.stdout
    calling = sum(1 for c in SINGLE_TURN if c.expected is not None and not c.expected.no_call)
    assert f"calls a tool less often ({calling} missed, 0 extra) than the reference" in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("FAIL") and "moonshot" in line]


def test_a_reference_from_another_results_file_judges_every_row_of_this_one(
    vendors: Path, tmp_path: Path
) -> None:
    official = run_vendors(tmp_path / "official.jsonl", SINGLE_TURN, {"moonshot": perfect}, model="kimi-k2")
    verdicts = vendor_verdicts(vendors, "moonshot=kimi-k2", SINGLE_TURN, against=official)
    assert {v.comparison.key.split("|")[1]: v.passed for v in verdicts} == {
        "openai-compatible": True,
        "moonshot": True,
        "anthropic-messages": False,
    }


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--reference", "nobody=none"], "no row nobody=none"),
        (["--reference", "no-equals-sign"], "expected ADAPTER=MODEL"),
        (["--reference", REFERENCE, "--min-f1", "2"], "--min-f1 must be between 0 and 1"),
    ],
)
def test_a_bad_reference_is_one_line_and_exit_2(
    vendors: Path, tmp_path: Path, args: list[str], words: str, cli: Cli
) -> None:
    done = cli("compare", str(vendors), *args, "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr


def test_a_reference_of_the_same_cases_under_another_folder_name_is_compared(
    vendors: Path, tmp_path: Path, cli: Cli
) -> None:
    """A case set is its cases' content: the folder's name a header records identifies nothing."""
    other = run_vendors(tmp_path / "other.jsonl", SINGLE_TURN[:3], {"moonshot": perfect}, case_set="my-cases")
    done = cli(
        "compare",
        str(vendors),
        "--reference",
        "moonshot=qwen2.5-coder-1.5b-instruct",
        "--against",
        str(other),
        "--out",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr  # 3 episodes: too few to tell any row apart
    assert "| local-model | moonshot | qwen2.5-coder-1.5b-instruct | 3 | 3/0/0/0 |" in done.stdout


def _answer(*calls: tuple[str, dict[str, object]], error: bool = False) -> Answer:
    return Answer(calls=(tuple({"name": n, "arguments": a} for n, a in calls),), error=error)


def test_agreement_uses_the_scorers_matching_and_trigger_counts_follow_the_definitions() -> None:
    case = next(c for c in SINGLE_TURN if c.category == "parallel")
    assert case.expected is not None
    calls = [(c.name, c.canonical_arguments()) for c in case.expected.calls]
    reference = {"a": _answer(*calls), "b": _answer(), "c": _answer(*calls), "d": _answer(*calls)}
    row = {
        "a": _answer(*reversed(calls)),  # same calls, other order: agrees
        "b": _answer(calls[0]),  # called where the reference did not: FP
        "c": _answer(error=True),  # an error returned nothing to judge: counted apart, never a negative
        "d": _answer(calls[0]),  # called, but not the same calls: TP, disagrees
    }
    cases: dict[str, Case] = {e: case for e in "abcd"}
    c = compare_rows("row", row, "ref", reference, cases)
    assert (c.tp, c.fp, c.fn, c.tn) == (2, 1, 0, 0)
    assert (c.row_errors, c.errored, c.shared) == (1, ("c",), 4)
    assert (c.agreed, c.judged, c.disagreed) == (1, 3, ("b", "d"))
    assert c.precision == pytest.approx(2 / 3) and c.recall == pytest.approx(1.0)
    assert c.f1 == pytest.approx(4 / 5)
    assert c.missed == () and c.extra == ("b",)
    (verdict,) = judge([c])
    assert (
        not verdict.passed
        and "1 of 4 requests the reference answered ended in an error" in verdict.failures[0]
    )


def test_the_paired_trigger_test_needs_enough_discordant_episodes_to_fail() -> None:
    reference = {f"e{i}": _answer(("t", {})) for i in range(20)}
    few = {f"e{i}": _answer() if i < 2 else _answer(("t", {})) for i in range(20)}
    many = {f"e{i}": _answer() if i < 9 else _answer(("t", {})) for i in range(20)}
    verdicts = judge(
        [compare_rows("few", few, "ref", reference, {}), compare_rows("many", many, "ref", reference, {})]
    )
    assert [v.passed for v in verdicts] == [True, False]
    assert verdicts[1].p_values["trigger"] < 0.05


def test_the_f1_interval_holds_the_observed_f1_and_is_reproducible() -> None:
    mine = [True, True, False, True, False, False, True, False] * 4
    theirs = [True, False, False, True, True, False, True, False] * 4
    low, high = f1_bootstrap(mine, theirs)
    assert 0 <= low <= 0.75 <= high <= 1
    assert f1_bootstrap(mine, theirs) == (low, high)
    assert all(math.isnan(x) for x in f1_bootstrap([False] * 5, [False] * 5)), "no call anywhere: no F1"


def test_the_committed_replay_compares_every_row_against_a_reference_row(tmp_path: Path, cli: Cli) -> None:
    results = tmp_path / "results.jsonl"
    run = cli(
        "run", "--adapters", "openai-compatible,moonshot,anthropic-messages",
        "--models", "qwen2.5-coder-1.5b-instruct", "--results", str(results), "--reports", str(tmp_path),
        "--no-progress",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    done = cli("compare", str(results), "--reference", REFERENCE, "--out", str(tmp_path))
    assert done.returncode in (0, 1), done.stderr
    table = pd.read_csv(tmp_path / "compare.csv")
    # moonshot has an emulated row too: its cases whose requests changed with the strict schema
    # pass were recorded again from the emulator (README, "What the committed cassettes are")
    assert set(table["adapter"]) == {"anthropic-messages", "moonshot"}
    assert (table["shared"] > 0).all()
    assert table[["f1", "agreement"]].notna().all().all()
    for column in ("TP/FP/FN/TN", "trigger F1", "agreement", "paired p (trigger)"):
        assert column in done.stdout


def test_unlabelled_cases_are_never_scored_wrong_and_are_judged_against_the_reference(tmp_path: Path) -> None:
    from xpeval.evals.results.load import load_run
    from xpeval.evals.verdict.scorecard import scorecard

    traffic = [
        Case.model_validate(
            {
                "id": f"traffic_{i:05d}",
                "category": "unlabelled",
                "tools": [
                    {
                        "name": "get_weather",
                        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                    }
                ],
                "messages": [{"role": "user", "content": f"Weather in city {i}?"}],
            }
        )
        for i in range(12)
    ]

    def official(case: Case) -> TurnResult:
        return TurnResult(tool_calls=[ToolCall(id="c", name="get_weather", arguments={"city": case.id})])

    def vendor(case: Case) -> TurnResult:
        wrong = case.id in ("traffic_00001", "traffic_00002", "traffic_00003")
        return TurnResult(
            tool_calls=[ToolCall(id="c", name="get_weather", arguments={"city": 7 if wrong else case.id})]
        )

    path = run_vendors(
        tmp_path / "r.jsonl", traffic, {"moonshot": official, "openai-compatible": vendor}, case_set="traffic"
    )
    card = scorecard(load_run(path).frame).set_index("adapter")
    assert (card["accuracy_n"] == 0).all() and (card["tool_selection_n"] == 0).all(), "no label: no accuracy"
    assert (
        card.loc["openai-compatible", "schema_valid_k"] == 9
        and card.loc["openai-compatible", "schema_valid_n"] == 12
    )
    (verdict,) = vendor_verdicts(path, "moonshot=qwen2.5-coder-1.5b-instruct", traffic)
    c = verdict.comparison
    assert (c.tp, c.fp, c.fn, c.tn, c.agreed, c.judged) == (12, 0, 0, 0, 9, 12)
    assert c.schema_valid == (9, 12) and c.reference_schema_valid == (12, 12)
    assert c.tests["schema_valid"] == (3, 0)


def _with_a_second_final_row(results: Path, into: Path) -> Path:
    """`results` with its first final row written twice: which of the two answers counts?"""
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"final":true' in line.replace(" ", ""))
    into.write_text("".join([*lines[: first + 1], lines[first], *lines[first + 1 :]]), encoding="utf-8")
    return into


@pytest.mark.parametrize("tampered", ["results", "against"])
def test_compare_refuses_a_results_or_reference_file_that_is_not_evidence(
    vendors: Path, tmp_path: Path, tampered: str, cli: Cli
) -> None:
    official = run_vendors(tmp_path / "official.jsonl", SINGLE_TURN, {"moonshot": perfect}, model="kimi-k2")
    results, against = vendors, official
    if tampered == "results":
        results = _with_a_second_final_row(vendors, tmp_path / "tampered.jsonl")
    else:
        against = _with_a_second_final_row(official, tmp_path / "tampered.jsonl")
    args = ["--reference", "moonshot=kimi-k2", "--against", str(against), "--out", str(tmp_path / "out")]
    done = cli("compare", str(results), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"{tmp_path / 'tampered.jsonl'}: not evidence the gate can trust" in done.stderr
    assert "more than one final row" in done.stderr
    gate = cli("gate", "--results", str(vendors), *args[:4])
    if tampered == "against":
        assert gate.returncode == 2 and "not evidence the gate can trust" in gate.stderr, gate.stderr


def test_compare_works_without_the_report_extra(vendors: Path, tmp_path: Path) -> None:
    """Issue 36, point 1: the README's `compare` in the Quick-start install (no matplotlib) gives
    its verdict (tables and CSV), never a missing-module crash read as a failed verdict."""
    blocked = "import sys; sys.modules['matplotlib'] = None\n"
    code = f"{blocked}from xpeval.evals.cli import console_main\nraise SystemExit(console_main())"
    args = ["compare", str(vendors), "--reference", REFERENCE, "--out", str(tmp_path)]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr  # the dropping vendor fails: a verdict, not a crash
    assert "matplotlib" not in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "compare.csv").exists() and "| anthropic-messages |" in done.stdout
