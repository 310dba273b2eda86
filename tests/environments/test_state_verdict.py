"""An environment case is judged by the state its calls leave and their results, as BFCL's
multi-turn checker judges it: order, extra read-only calls and held-out turns count only through
the state. The case here is written for these tests, on BFCL's GorillaFileSystem class."""

from __future__ import annotations

from typing import Any

import pytest

from tests._bfcl_multi_turn import needs_bfcl_environment
from xpeval.evals.cases.model import Case
from xpeval.evals.verdict.scoring import episode_verdict
from xpeval.evals.verdict.state import state_verdict

pytestmark = needs_bfcl_environment

TOOLS = [
    {
        "name": name,
        "description": f"{name} in the current directory",
        "parameters": {"type": "object", "properties": properties, "required": list(properties)},
    }
    for name, properties in {
        "cd": {"folder": {"type": "string"}},
        "mkdir": {"dir_name": {"type": "string"}},
        "cat": {"file_name": {"type": "string"}},
        "touch": {"file_name": {"type": "string"}},
        "pwd": {},
    }.items()
]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


CD, MKDIR, CAT, PWD = (
    call("cd", folder="docs"),
    call("mkdir", dir_name="out"),
    call("cat", file_name="a.txt"),
    call("pwd"),
)


def case() -> Case:
    return Case.model_validate(
        {
            "id": "files_state",
            "category": "multi_turn",
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "In docs, make a folder named out."}],
            "expected": {"ground_truth": [CD, MKDIR]},
            "follow_ups": [
                {
                    "messages": [{"role": "user", "content": "Print b.txt, which does not exist."}],
                    "expected": {"ground_truth": []},
                },
                {
                    "messages": [{"role": "user", "content": "Show a.txt."}],
                    "expected": {"ground_truth": [CAT]},
                },
            ],
            "environment": {
                "kind": "bfcl",
                "classes": ["GorillaFileSystem"],
                "initial_state": {
                    "GorillaFileSystem": {
                        "root": {
                            "ana": {
                                "type": "directory",
                                "contents": {
                                    "docs": {
                                        "type": "directory",
                                        "contents": {"a.txt": {"type": "file", "content": "hello"}},
                                    }
                                },
                            }
                        }
                    }
                },
            },
        }
    )


def test_the_ground_truth_is_right_and_every_judged_turn_gets_credit() -> None:
    verdict = state_verdict(case(), [[CD, MKDIR], [], [CAT]])
    assert verdict.correct and verdict.turns == (True, None, True) and verdict.credit == "2/2"


def test_calls_in_another_order_that_leave_another_state_are_wrong() -> None:
    verdict = state_verdict(case(), [[MKDIR, CD], [], [CAT]])
    assert not verdict.correct
    assert "turn 0: state differs" in str(verdict.reason) and "GorillaFileSystem" in str(verdict.reason)


def test_an_extra_read_only_call_leaves_the_same_state_and_is_right() -> None:
    assert state_verdict(case(), [[CD, PWD, MKDIR], [PWD], [CAT, PWD]]).correct


def test_a_turn_without_ground_truth_is_judged_only_through_the_state_it_leaves() -> None:
    assert state_verdict(case(), [[CD, MKDIR], [CAT], [CAT]]).correct  # read-only: no irrelevance check
    verdict = state_verdict(case(), [[CD, MKDIR], [call("touch", file_name="b.txt")], [CAT]])
    assert not verdict.correct and verdict.turns == (True, None, False)
    assert str(verdict.reason).startswith("turn 2: state differs")


def test_results_count_across_turns_but_a_judged_turn_needs_a_call() -> None:
    assert state_verdict(case(), [[CD, MKDIR, CAT], [], [PWD]]).correct  # cat's result came earlier
    verdict = state_verdict(case(), [[CD, MKDIR], [], [PWD]])
    assert not verdict.correct and "result(s) missing" in str(verdict.reason) and verdict.credit == "1/2"
    assert "turn 2: no call" in str(state_verdict(case(), [[CD, MKDIR], [], []]).reason)


def test_an_episode_that_stopped_before_its_last_turn_is_wrong() -> None:
    verdict = state_verdict(case(), [[CD, MKDIR]])
    assert not verdict.correct and "stopped after 1 of 3 turns" in str(verdict.reason)


def test_a_call_whose_arguments_could_not_be_read_is_not_run() -> None:
    broken = {"name": "mkdir", "arguments": "{not json"}
    verdict = state_verdict(case(), [[CD, broken], [], [CAT]])
    assert not verdict.correct and verdict.malformed


def test_the_row_verdict_is_all_or_nothing_with_the_turn_credit_beside_it() -> None:
    right = episode_verdict(case(), [[CD, MKDIR], [], [CAT]], failed=False)
    assert right["correct"] is True and right["reason"] is None
    wrong = episode_verdict(case(), [[CD, MKDIR], [], [PWD]], failed=False)
    assert wrong["correct"] is False and "(turns passed: 1/2)" in wrong["reason"]
    assert episode_verdict(case(), [[CD, MKDIR], [], [CAT]], failed=True)["correct"] is False


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {
                "expected": {
                    "ground_truth": [CD],
                    "calls": [{"name": "cd", "arguments": {"folder": ["docs"]}}],
                }
            },
            "replaces calls",
        ),
        ({"tool_outputs": [{"tool": "cd", "output": "ok"}]}, "answers every call"),
        ({"expected": {"ground_truth": [call("cd")]}}, "requires 'folder'"),
        ({"expected": {"ground_truth": [call("rm", file_name="a.txt")]}}, "not offered in turn 0"),
        ({"environment": {"kind": "bfcl", "classes": ["os"]}}, "not a bfcl environment class"),
    ],
)
def test_an_environment_case_that_cannot_be_judged_by_state_is_refused(
    change: dict[str, Any], problem: str
) -> None:
    raw = case().model_dump(mode="json") | change
    with pytest.raises(ValueError, match=problem):
        Case.model_validate(raw)


def test_a_ground_truth_without_an_environment_is_refused() -> None:
    raw = case().model_dump(mode="json")
    raw["environment"] = None
    with pytest.raises(ValueError, match="only a case with an environment"):
        Case.model_validate(raw)


def test_a_required_empty_string_in_a_ground_truth_is_a_value_not_optional() -> None:
    raw = case().model_dump(mode="json")
    raw["follow_ups"][1]["expected"] = {"ground_truth": [call("touch", file_name="")]}
    loaded = Case.model_validate(raw)
    truth = loaded.turns[2].expected.ground_truth  # type: ignore[union-attr]
    assert truth is not None and truth[0].arguments == {"file_name": ""}
