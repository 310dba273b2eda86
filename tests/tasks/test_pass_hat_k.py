"""pass^k of task cases, C(c,k)/C(n,k) per task averaged over tasks as τ² computes it, against
figures computed by hand; reported in a section of its own, beside the scorecard's rates."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from xpeval.evals.verdict.pass_hat_k import pass_hat_k, task_pass_hat_k
from xpeval.evals.verdict.scorecard import by_category, scorecard, to_markdown


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 2, 1, Fraction(1, 2)),
        (4, 2, 2, Fraction(1, 6)),  # C(2,2)/C(4,2) = 1/6
        (4, 2, 3, Fraction(0)),
        (4, 3, 2, Fraction(1, 2)),  # C(3,2)/C(4,2) = 3/6
        (4, 3, 3, Fraction(1, 4)),  # C(3,3)/C(4,3) = 1/4
        (4, 4, 4, Fraction(1)),
        (5, 3, 2, Fraction(3, 10)),  # C(3,2)/C(5,2) = 3/10
    ],
)
def test_pass_hat_k_of_one_task_is_c_choose_k_over_n_choose_k(
    n: int, c: int, k: int, expected: Fraction
) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(float(expected), abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4), (3, -1, 1)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass\\^k needs"):
        pass_hat_k(n, c, k)


def rows(source: str, outcomes: dict[str, list[bool]], category: str = "task") -> list[dict[str, object]]:
    return [
        {
            "source": source,
            "adapter": "openai-chat",
            "model": "m",
            "case_id": case_id,
            "trial": trial,
            "category": category,
            "correct": passed,
        }
        for case_id, results in outcomes.items()
        for trial, passed in enumerate(results)
    ]


THREE_TASKS = {
    "a": [True, False, True, False],  # n=4, c=2: 1/2, 1/6, 0, 0
    "b": [True, True, True, True],  # c=4: 1, 1, 1, 1
    "c": [True, True, False, True],  # c=3: 3/4, 1/2, 1/4, 0
}


def test_pass_hat_k_is_averaged_over_tasks_for_k_up_to_the_trials() -> None:
    table = task_pass_hat_k(pd.DataFrame(rows("emulated", THREE_TASKS)))
    (row,) = table.to_dict("records")
    assert (row["tasks"], row["trials_min"], row["trials_max"]) == (3, 4, 4)
    hand = [(1 / 2 + 1 + 3 / 4) / 3, (1 / 6 + 1 + 1 / 2) / 3, (0 + 1 + 1 / 4) / 3, (0 + 1 + 0) / 3]
    assert [row[f"pass^{k}"] for k in range(1, 5)] == pytest.approx(hand, abs=1e-12)
    assert hand == pytest.approx([0.75, 0.5555555555555556, 0.4166666666666667, 0.3333333333333333])


def test_k_stops_at_the_fewest_trials_a_task_had_as_in_tau2() -> None:
    uneven = {"a": [True, True, False], "b": [True, False]}
    (row,) = task_pass_hat_k(pd.DataFrame(rows("local-model", uneven))).to_dict("records")
    assert (row["trials_min"], row["trials_max"]) == (2, 3)
    assert row["pass^1"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert row["pass^2"] == pytest.approx((1 / 3 + 0) / 2)  # C(2,2)/C(3,2) = 1/3; C(1,2) = 0
    assert "pass^3" not in row


def test_only_task_rows_count_and_each_source_is_its_own_row() -> None:
    frame = pd.DataFrame(
        rows("emulated", THREE_TASKS)
        + rows("local-model", {"a": [False, False]})
        + rows("emulated", {"x": [False, False, False, False]}, category="multi_turn")
    )
    table = task_pass_hat_k(frame).set_index("source")
    assert table.loc["emulated", "tasks"] == 3 and table.loc["emulated", "pass^1"] == pytest.approx(0.75)
    assert table.loc["local-model", "pass^2"] == 0


def test_no_task_no_table() -> None:
    assert task_pass_hat_k(pd.DataFrame(rows("emulated", {"x": [True]}, category="simple"))).empty


def full_frame(outcomes: dict[str, list[bool]]) -> pd.DataFrame:
    """Rows with every column the scorecard reads."""
    frame = pd.DataFrame(rows("emulated", outcomes))
    for column in ("tool_selection_correct", "arguments_correct", "schema_valid", "recorded_at", "reason"):
        frame[column] = None
    for column in ("irrelevance", "malformed", "error"):
        frame[column] = False
    for column in ("latency_s", "input_tokens", "output_tokens", "cost_usd"):
        frame[column] = float("nan")
    frame["steps"] = 1
    return frame


def test_the_scorecard_shows_pass_hat_k_in_its_own_section_and_its_rates_are_unchanged() -> None:
    frame = full_frame(THREE_TASKS)
    card = scorecard(frame)
    text = to_markdown(card, by_category(frame), tasks=task_pass_hat_k(frame))
    section = text.split("## Tasks: pass^k", 1)[1]
    assert "| EMULATED (pipeline only) | openai-chat | m | 3 | 4 | 0.750 | 0.556 | 0.417 | 0.333 |" in section
    assert not any(column.startswith("pass^") for column in card.columns)
    assert card.loc[0, "accuracy_k"] == 9 and card.loc[0, "accuracy_n"] == 12  # every trial, as before
    assert "## Tasks" not in to_markdown(card, by_category(frame))
