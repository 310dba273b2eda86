"""A task's reward, as τ² computes it for the database and communication: 1 only when the final
state equals the expected actions' and every required string was said to the user, and the user
ended the conversation; 0 when any of them misses."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tasks._retail import retail_tasks
from xpeval.evals.verdict.scoring import episode_verdict
from xpeval.evals.verdict.task_reward import communicated, task_reward

TASKS = retail_tasks()
CANCEL = TASKS["retail_cancel_pending_order"]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


LOOKUP = call("find_user_id_by_email", email="mei.tanaka@example.com")
READ = call("get_order_details", order_id="#W1001")
CANCELLED = call("cancel_pending_order", order_id="#W1001", reason="no longer needed")
MISTAKE = call("cancel_pending_order", order_id="#W1001", reason="ordered by mistake")
SAID = ["Your order #W1001 is cancelled; 44.49 goes back to your gift card."]


def test_the_reward_is_1_when_the_state_matches_and_the_string_was_said() -> None:
    reward = task_reward(CANCEL, [LOOKUP, READ, CANCELLED], SAID, "user_stop")
    assert (reward.reward, reward.state_matches, reward.missing, reward.reason) == (1, True, (), None)


def test_read_only_calls_change_nothing_the_reward_looks_at() -> None:
    assert task_reward(CANCEL, [READ, CANCELLED, READ, LOOKUP], SAID, "user_stop").reward == 1


@pytest.mark.parametrize(
    ("calls", "said", "ended", "why"),
    [
        ([LOOKUP, READ], SAID, "user_stop", "the final state differs"),
        ([LOOKUP, MISTAKE], SAID, "user_stop", "the final state differs"),
        ([LOOKUP, CANCELLED], ["It is cancelled."], "user_stop", "never said to the user: '44.49'"),
        ([LOOKUP, CANCELLED], [], "user_stop", "never said to the user"),
        ([LOOKUP, CANCELLED], SAID, "max_turns", "ended by max_turns"),
        ([LOOKUP, CANCELLED], SAID, "error", "ended by error"),
    ],
)
def test_the_reward_is_0_when_the_state_or_the_string_or_the_ending_misses(
    calls: list[dict[str, Any]], said: list[str], ended: str, why: str
) -> None:
    reward = task_reward(CANCEL, calls, said, ended)
    assert reward.reward == 0
    assert why in str(reward.reason)


def test_a_write_the_store_refuses_changes_nothing() -> None:
    # the second cancel fails (the order is no longer pending): the state is the expected one
    assert task_reward(CANCEL, [CANCELLED, MISTAKE], SAID, "user_stop").reward == 1


def test_the_state_and_the_string_are_both_required() -> None:
    state_only = task_reward(CANCEL, [CANCELLED], ["Cancelled."], "user_stop")
    string_only = task_reward(CANCEL, [READ], SAID, "user_stop")
    assert (state_only.state_matches, state_only.missing, state_only.reward) == (True, ("44.49",), 0)
    assert (string_only.state_matches, string_only.missing, string_only.reward) == (False, (), 0)


def test_a_call_whose_arguments_could_not_be_read_never_runs() -> None:
    broken = {"name": "cancel_pending_order", "arguments": {}, "parse_error": "not JSON"}
    reward = task_reward(CANCEL, [broken], SAID, "user_stop")
    assert (reward.reward, reward.malformed) == (0, True)


def test_a_read_only_task_is_judged_by_the_unchanged_state_and_what_was_said() -> None:
    tracking = TASKS["retail_tracking_number"]
    read = call("get_order_details", order_id="#W1002")
    assert task_reward(tracking, [read], ["It is TRK10027733."], "user_stop").reward == 1
    assert task_reward(tracking, [read], ["It has shipped."], "user_stop").reward == 0
    cancelled = call("cancel_pending_order", order_id="#W1001", reason="ordered by mistake")
    assert task_reward(tracking, [read, cancelled], ["It is TRK10027733."], "user_stop").reward == 0


@pytest.mark.parametrize(
    ("info", "message", "found"),
    [
        ("44.49", "A refund of $44.49.", True),
        ("1093.34", "A refund of $1,093.34.", True),  # the message's commas are removed, as in τ²
        ("1,093.34", "A refund of $1,093.34.", False),  # the string's own are not (τ² does not either)
        ("trk10027733", "Tracking: TRK10027733", True),
        ("44.49", "A refund of $44.5.", False),
    ],
)
def test_a_required_string_is_found_as_taus_communicate_check_finds_it(
    info: str, message: str, found: bool
) -> None:
    assert communicated(info, [message]) is found


def test_a_task_rows_verdict_is_its_reward_and_says_what_missed() -> None:
    turns = [[LOOKUP], [CANCELLED]]
    right = episode_verdict(CANCEL, turns, False, said=SAID, ended="user_stop")
    silent = episode_verdict(CANCEL, turns, False, said=["Done."], ended="user_stop")
    failed = episode_verdict(CANCEL, turns, True, said=SAID, ended="error")
    dropped = episode_verdict(CANCEL, turns, False, dropped_calls=3, said=SAID, ended="user_stop")
    assert (right["correct"], right["reason"]) == (True, None)
    assert silent["correct"] is False and silent["reason"] == "reward 0: never said to the user: '44.49'"
    assert failed["correct"] is False and dropped["correct"] is False
    assert right["tool_selection_correct"] is None and right["arguments_correct"] is None
