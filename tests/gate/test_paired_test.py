"""The gate compares the same cases on both sides: a paired exact test per row and rate, with
the family-wise error held across rows and rates, and exact comparison for emulated rows."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.gate._rows import flipped, frame, outcomes
from xpeval.errors import UserError
from xpeval.evals.results.rows import ResultRow
from xpeval.evals.verdict.baseline import Baseline, update
from xpeval.evals.verdict.gate import RunScope, baseline_for_run, evaluate, junit_xml
from xpeval.evals.verdict.paired_test import can_reject, holm, mcnemar_exact

BASE = [True] * 70 + [False] * 36
"""A local-model row at 66 % (70/106), the issue's starting point."""
SCOPE = RunScope(adapters=frozenset({"openai-compatible", "mimo", "vertex-ai"}), case_set="builtin")


def baseline_of(*groups: list[ResultRow]) -> Baseline:
    return update(None, frame(*groups), case_set="builtin", run="base", all_cases=True)[0]


def test_twelve_of_106_cases_flipped_on_a_local_model_row_fails_and_names_them() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(flipped(BASE, worse=12))), baseline, SCOPE)
    failed = {f.metric: f for f in report.failures}
    assert "accuracy" in failed
    assert len(failed["accuracy"].worse) == 12 and failed["accuracy"].worse[0] == "case_000"
    assert failed["accuracy"].p_value is not None and failed["accuracy"].p_value < 0.05
    assert "case_000" in failed["accuracy"].message


def test_the_issues_drop_from_70_to_52_of_106_fails() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(flipped(BASE, worse=18))), baseline, SCOPE)
    assert not report.passed


def test_one_flipped_case_on_a_local_model_row_is_noise() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(flipped(BASE, worse=1))), baseline, SCOPE)
    assert report.passed
    accuracy = next(f for f in report.findings if f.metric == "accuracy")
    assert accuracy.worse == ("case_000",), "the flipped case is still listed"


def test_flips_both_ways_that_cancel_out_are_not_a_regression() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(flipped(BASE, worse=10, better=10))), baseline, SCOPE)
    assert report.passed
    accuracy = next(f for f in report.findings if f.metric == "accuracy")
    assert len(accuracy.worse) == 10 and len(accuracy.better) == 10


def test_improvements_are_listed_and_never_fail() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(flipped(BASE, worse=0, better=20))), baseline, SCOPE)
    assert report.passed
    assert any(len(f.better) == 20 for f in report.findings)


def test_one_flipped_case_on_an_emulated_row_fails_because_it_is_deterministic() -> None:
    perfect = [True] * 106
    baseline = baseline_of(outcomes(perfect, adapter="mimo", source="emulated"))
    report = evaluate(
        frame(outcomes(flipped(perfect, worse=1), adapter="mimo", source="emulated")), baseline, SCOPE
    )
    assert not report.passed
    assert any("deterministic" in f.message and f.worse == ("case_000",) for f in report.failures)


def test_the_same_flip_on_a_local_row_beside_it_stays_noise() -> None:
    perfect = [True] * 106
    baseline = baseline_of(outcomes(perfect, adapter="mimo", source="emulated"), outcomes(BASE))
    report = evaluate(
        frame(outcomes(perfect, adapter="mimo", source="emulated"), outcomes(flipped(BASE, worse=1))),
        baseline,
        SCOPE,
    )
    assert report.passed


def test_tolerance_is_an_extra_absolute_floor() -> None:
    baseline = baseline_of(outcomes(BASE))
    run = frame(outcomes(flipped(BASE, worse=4)))
    assert evaluate(run, baseline, SCOPE).passed
    assert not evaluate(run, baseline, SCOPE, tolerance=0.02).passed


def test_a_row_in_the_baseline_missing_from_the_run_fails() -> None:
    baseline = baseline_of(outcomes(BASE), outcomes([True] * 5, adapter="mimo", source="emulated"))
    report = evaluate(frame(outcomes(BASE)), baseline, SCOPE)
    assert any(f.metric == "present" for f in report.failures)


def test_a_run_of_some_adapters_is_compared_with_their_rows_only() -> None:
    baseline = baseline_of(outcomes(BASE), outcomes([True] * 5, adapter="mimo", source="emulated"))
    scope = RunScope(adapters=frozenset({"openai-compatible"}), case_set="builtin")
    compared = baseline_for_run(baseline, scope)
    report = evaluate(frame(outcomes(flipped(BASE, worse=12))), compared, scope)
    assert not any(f.metric == "present" for f in report.findings), "mimo was not run, so it is not missing"
    assert any(f.metric == "accuracy" for f in report.failures), "the row's own regression still fails"


def test_a_run_of_some_cases_is_compared_on_those_cases() -> None:
    baseline = baseline_of(outcomes(BASE))
    some = outcomes(flipped(BASE, worse=12))[:40]
    scope = RunScope(adapters=SCOPE.adapters, case_set="builtin", all_cases=False)
    report = evaluate(frame(some), baseline, scope)
    assert not any(f.metric == "cases" for f in report.findings), "cases not selected are not missing"
    assert any(f.metric == "accuracy" and len(f.worse) == 12 for f in report.failures)


def test_a_full_run_that_skipped_baseline_cases_fails() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(BASE)[:100]), baseline, SCOPE)
    assert any(f.metric == "cases" and len(f.worse) == 6 for f in report.failures)


def test_a_baseline_of_another_case_set_is_refused_naming_both() -> None:
    baseline = baseline_of(outcomes(BASE))
    with pytest.raises(UserError, match="case set 'builtin', this run used 'my-cases'"):
        baseline_for_run(baseline, RunScope(adapters=SCOPE.adapters, case_set="my-cases"))


def test_a_baseline_without_a_row_of_the_run_is_refused_not_a_comparison_with_nothing() -> None:
    baseline = baseline_of(outcomes([True] * 5, adapter="mimo", source="emulated"))
    with pytest.raises(UserError, match="no row of this run"):
        baseline_for_run(baseline, RunScope(adapters=frozenset({"openai-compatible"}), case_set="builtin"))


def test_a_row_where_every_episode_errored_measured_nothing_and_fails() -> None:
    errored = [r.model_copy(update={"error_kind": "connection", "correct": False}) for r in outcomes(BASE)]
    report = evaluate(frame(errored), None, SCOPE)
    assert any(f.metric == "measured" for f in report.failures)
    one_ok = [*errored[:-1], outcomes(BASE)[-1]]
    assert not any(f.metric == "measured" for f in evaluate(frame(one_ok), None, SCOPE).failures)


def test_conformance_failures_fail_even_without_a_baseline() -> None:
    rows = outcomes([True] * 9)
    rows[3] = rows[3].model_copy(update={"error_kind": "cassette", "reason": "no recorded response"})
    report = evaluate(frame(rows), None, SCOPE)
    assert not report.passed and "no recorded response" in report.failures[0].message


def test_the_junit_report_is_valid_and_counts_failures() -> None:
    baseline = baseline_of(outcomes(BASE))
    report = evaluate(frame(outcomes(flipped(BASE, worse=12))), baseline, SCOPE)
    suite = ElementTree.fromstring(junit_xml(report))
    assert suite.tag == "testsuite" and int(suite.get("failures", "0")) == len(report.failures) > 0


def test_mcnemar_matches_the_exact_binomial() -> None:
    assert mcnemar_exact(12, 0) == 2 * 0.5**12
    assert mcnemar_exact(1, 0) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


@given(st.integers(0, 40), st.integers(0, 40))
def test_an_untestable_pair_can_never_reach_alpha(worse: int, better: int) -> None:
    if not can_reject(worse + better):
        assert mcnemar_exact(worse, better) > 0.05


def test_holm_is_never_below_the_raw_p_values() -> None:
    raw = [0.001, 0.02, 0.04, 0.5]
    assert all(a >= r for a, r in zip(holm(raw), raw, strict=True))
