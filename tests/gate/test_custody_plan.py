"""The chain of custody's planned episodes: exactly the ones the header's plan lists, however it is
kept (the plan is never expanded: a million trials must not set the gate's memory)."""

from __future__ import annotations

import itertools

import pytest

from xpeval.evals.results.rows import ResultRow, RunHeader, RunTrailer
from xpeval.evals.results.run_plan import RunPlan, Shard, episode_id
from xpeval.evals.verdict.custody import judge

RUN = "run-1"
CASES = ["weather", "weather@1", "a@b", "calc"]
MODELS: dict[str, list[str | None]] = {"openai-chat": ["gpt-a", "gpt-b"], "anthropic-messages": [None]}


def _header(shard: str | None, repeat: int) -> RunHeader:
    plan = RunPlan.of(CASES, MODELS, Shard.parse(shard) if shard else None, repeat)
    return RunHeader(run=RUN, fingerprint="f", started_at="now", config={"mode": "record"}, plan=plan)


def _row(case_id: str, trial: int, adapter: str, model: str) -> ResultRow:
    return ResultRow(
        run=RUN, case_id=case_id, trial=trial, category="simple", adapter=adapter, wire=adapter, model=model,
        attempt=1, final=True, source="live", correct=True, tool_selection_correct=True,
        arguments_correct=True, irrelevance=False, malformed=False, latency_s=0.1, started_at="now",
    )  # fmt: skip


def _planned(header: RunHeader, row: ResultRow) -> bool:
    """What `RunPlan.keys` says: the row's episode is listed for its adapter (any model, or its own)."""
    assert header.plan is not None
    keys = set(header.plan.keys())
    episode, adapter, model = row.key
    return (episode, adapter, model) in keys or (episode, adapter, None) in keys


CANDIDATES = [
    _row(case_id, trial, adapter, model)
    for case_id in ["weather", "weather@1", "weather@01", "a@b", "a", "calc", "other", "calc@2"]
    for trial in [0, 1, 2, 3]
    for adapter, model in [("openai-chat", "gpt-a"), ("openai-chat", "gpt-c"), ("anthropic-messages", "any"),
                           ("mistral", "m")]
]  # fmt: skip


@pytest.mark.parametrize(("shard", "repeat"), [(None, 0), (None, 1), (None, 3), ("1/2", 3), ("2/2", 2)])
def test_a_final_row_is_of_a_planned_episode_exactly_when_the_plan_lists_it(
    shard: str | None, repeat: int
) -> None:
    header = _header(shard, repeat)
    for row in CANDIDATES:
        refusals = judge(header, [row], {}).refusals
        unplanned = any("does not plan" in r for r in refusals)
        assert unplanned is not _planned(header, row), (row.key, refusals)


def test_each_planned_episode_may_have_one_final_row_and_a_second_is_refused_once() -> None:
    header = _header("1/2", 3)
    planned = [row for row in CANDIDATES if _planned(header, row)]
    assert planned
    for row in planned[:10]:
        for copies, expected in [(1, 0), (2, 1), (3, 1)]:
            trailer = RunTrailer(run=RUN, finished_at="now", rows=copies)
            refusals = judge(header, [*itertools.repeat(row, copies), trailer], {}).refusals
            assert sum("more than one final row" in r for r in refusals) == expected, refusals
    # Two episodes that differ only in trial, or in model, are two episodes.
    first = planned[0]
    other = _row(
        first.case_id, first.trial, first.adapter, "gpt-b" if first.model == "gpt-a" else first.model
    )
    later = [r for r in planned if r.case_id == first.case_id and r.trial != first.trial]
    for second in [other, *later[:1]]:
        if _planned(header, second) and second.key != first.key:
            refusals = judge(header, [first, second], {}).refusals
            assert not any("more than one final row" in r for r in refusals), refusals


def test_an_episode_id_spelled_two_ways_is_one_episode() -> None:
    header = _header(None, 3)
    assert episode_id("weather", 1) == "weather@1"  # and "weather@1" is also a planned case
    refusals = judge(
        header, [_row("weather", 1, "openai-chat", "gpt-a"), _row("weather@1", 0, "openai-chat", "gpt-a")], {}
    )
    assert any("more than one final row" in r for r in refusals.refusals)
