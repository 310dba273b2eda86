"""A batch's answers are matched to the requests it held, and only to those (docs/batch.md,
"Polling, answers, errors")."""

from __future__ import annotations

import pytest

from xpeval.adapters.wires.batch import BatchAnswer
from xpeval.errors import UserError
from xpeval.evals.batch.session import answers_by_id
from xpeval.evals.results.batch_records import BatchIntent

INTENT = BatchIntent(
    run="run-1",
    batch="xb-1",
    api="openai",
    adapter="openai-chat",
    model="gpt-4.1-mini",
    created_after=0.0,
    episodes=["calc_simple_01", "calc_simple_02"],
    custom_ids=["c-1", "c-2"],
    digests=["0" * 64, "1" * 64],
    at="2026-12-07T00:00:00+00:00",
)


def test_answers_are_found_by_custom_id_whatever_their_order_and_the_first_of_a_repeat_counts() -> None:
    first = BatchAnswer("c-2", "succeeded", status=200, body=b"{}")
    repeat = BatchAnswer("c-2", "errored", status=500)
    other = BatchAnswer("c-1", "expired")

    by_id = answers_by_id(INTENT, "batch_abc", [first, other, repeat])

    assert by_id == {"c-2": first, "c-1": other}


def test_an_answer_for_a_request_the_batch_never_held_stops_the_run_naming_both_batches() -> None:
    stranger = BatchAnswer("c-9", "succeeded", status=200, body=b"{}")

    with pytest.raises(
        UserError, match=r"batch batch_abc answers requests batch xb-1 never held \(c-9, \.\.\.\)"
    ):
        answers_by_id(INTENT, "batch_abc", [BatchAnswer("c-1", "expired"), stranger])
