"""BFCL's multi-turn categories end to end, against the installed bfcl-eval 2026.3.23:

- `xpeval cases bfcl` imports at least 195 of each 200 entries, and every entry it refuses is one
  whose data contradicts itself;
- BFCL's ground truth, played as a model's answers by the loopback emulator through the runner
  and the agent loop (each call executed on the episode's environment), is right on every entry,
  when recorded and again when replayed from the cassettes (the replay runs the calls again);
- xpeval's state verdict equals bfcl-eval's own `multi_turn_checker` on five answers per entry.

CI takes a seeded sample per category (`tests/_bfcl_multi_turn.py`: 4 entries played through
the runner, 13 compared with the checker); `XPEVAL_BFCL_FULL=1` (`nox -s bfcl_state`) takes every
imported entry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._bfcl_multi_turn import (
    FULL,
    LOOP_SAMPLE_PER_CATEGORY,
    VARIANTS,
    bfcl_verdict,
    case_by_id,
    chosen,
    chosen_ids,
    ground_truth,
    imported,
    needs_bfcl_environment,
)
from xpeval.evals.cases.bfcl_multi_turn import MULTI_TURN_CATEGORIES
from xpeval.evals.cassettes import Mode
from xpeval.evals.results.load import load_run
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.scoring import episode_verdict

pytestmark = needs_bfcl_environment

REFUSED = {
    # BFCL's ground truth calls `tail` in turn 1, but the entry holds `tail` out until turn 2.
    "multi_turn_miss_func_49": "'tail' is not offered in turn 1 (it is added in a later turn)",
}


@pytest.mark.parametrize("category", MULTI_TURN_CATEGORIES)
def test_each_multi_turn_category_imports_all_but_its_self_contradicting_entries(category: str) -> None:
    from xpeval.evals.cases.bfcl_data import bfcl_data_dir, convert_category

    outcomes = list(convert_category(bfcl_data_dir(), category))
    refused = {o.entry_id: str(o.skipped) for o in outcomes if o.case is None}
    assert len(outcomes) == 200 and len(outcomes) - len(refused) >= 195
    for entry_id, reason in refused.items():
        assert entry_id in REFUSED and REFUSED[entry_id] in reason, reason


def test_held_out_functions_are_offered_from_their_turn_with_bfcls_prompt() -> None:
    cases = [c for c in imported("multi_turn_miss_func") if any(f.added_tools for f in c.follow_ups)]
    assert len(cases) == len(imported("multi_turn_miss_func"))
    case = cases[0]
    turn = next(f for f in case.follow_ups if f.added_tools)
    index = case.follow_ups.index(turn) + 1
    added = {tool.name for tool in turn.added_tools}
    assert not added & {tool.name for tool in case.offered_tools(index - 1)}
    assert added <= {tool.name for tool in case.offered_tools(index)}
    assert (
        turn.messages[0].content == "I have updated some more functions you can choose from. What about now?"
    )


def _write_cases(folder: Path) -> int:
    folder.mkdir()
    count = 0
    for category in MULTI_TURN_CATEGORIES:
        with (folder / f"bfcl_{category}.jsonl").open("w", encoding="utf-8") as handle:
            for case in chosen(category, LOOP_SAMPLE_PER_CATEGORY):
                handle.write(json.dumps(case.model_dump(mode="json")) + "\n")
                count += 1
    return count


@pytest.mark.slow
@pytest.mark.timeout(3600 if FULL else 300)  # every entry: 21 minutes on a shared two-core machine
def test_the_ground_truth_through_the_agent_loop_is_right_when_recorded_and_replayed(tmp_path: Path) -> None:
    count = _write_cases(tmp_path / "cases")
    common = {
        "case_dir": tmp_path / "cases",
        "root": tmp_path,
        "adapters": ("openai-chat",),
        "cassettes": tmp_path / "cassettes",
        "no_baseline": True,
    }
    for mode, name in ((Mode.RECORD, "record"), (Mode.REPLAY, "replay")):
        results = tmp_path / f"{name}.jsonl"
        target = {"target": "emulator"} if mode is Mode.RECORD else {}
        run_suite(SuiteConfig(mode=mode, results=results, reports=tmp_path / name, **common, **target))  # type: ignore[arg-type]
        frame = load_run(results).frame
        assert len(frame) == count, name
        wrong = frame[frame["correct"] != True]  # noqa: E712  (None would be wrong too)
        assert wrong.empty, f"{name}: {wrong[['case_id', 'reason']].to_dict('records')[:3]}"
        assert set(frame["source"]) == {"emulated"}, name


@pytest.mark.parametrize(("category", "case_id"), chosen_ids())
def test_the_state_verdict_equals_bfcls_multi_turn_checker_on_five_answers(
    category: str, case_id: str
) -> None:
    case = case_by_id(category, case_id)
    truth = ground_truth(case)
    compared = 0
    for name, make in VARIANTS.items():
        answer = make(truth, case)
        if answer is None:
            continue
        mine = episode_verdict(case, answer, failed=False)
        assert mine["correct"] == bfcl_verdict(case, answer), f"{name}: {mine['reason']}"
        compared += 1
    assert compared >= 3


def test_a_required_empty_string_in_bfcls_ground_truth_is_kept_as_a_value() -> None:
    empty = [
        (case.id, call.name, key)
        for category in MULTI_TURN_CATEGORIES
        for case in imported(category)
        for turn in case.turns
        for call in (turn.expected.ground_truth or [] if turn.expected else [])
        for key, value in call.arguments.items()
        if value == "" and key in (case.tool(call.name).parameters.get("required") or [])  # type: ignore[union-attr]
    ]
    assert len(empty) >= 8, empty  # resolve_ticket(ticket_id=..., resolution=''): two entries per category


def test_the_cases_bfcl_command_writes_the_multi_turn_categories_that_load_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xpeval.evals.cases.loader import load_cases
    from xpeval.evals.cli import main

    assert (
        main(["cases", "bfcl", "--categories", ",".join(MULTI_TURN_CATEGORIES), "--out", str(tmp_path)]) == 0
    )
    assert "skipped multi_turn_miss_func_49:" in capsys.readouterr().err
    counts: dict[str, int] = {}
    for item in load_cases(tmp_path):
        counts[item.file] = counts.get(item.file, 0) + 1
        assert item.case.environment is not None
    assert counts == {
        "bfcl_multi_turn_base.jsonl": 200,
        "bfcl_multi_turn_miss_func.jsonl": 199,
        "bfcl_multi_turn_miss_param.jsonl": 200,
        "bfcl_multi_turn_long_context.jsonl": 200,
    }
