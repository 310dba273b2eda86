"""The agent loop in an environment: each call's real answer goes back to the model, every public
method answers whether or not the turn offers it, the tools offered grow with the turns, and a
turn that keeps calling past BFCL's step limit ends the episode."""

from __future__ import annotations

import asyncio
from typing import Any

from tests._bfcl_multi_turn import needs_bfcl_environment
from tests.environments.test_state_verdict import CAT, CD, MKDIR, case
from xpeval.adapters.contract import ToolCall, ToolResultMessage, TurnRequest, TurnResult
from xpeval.evals.cases.model import Case
from xpeval.evals.running.play import EpisodeOutcome, play_case
from xpeval.evals.verdict.scoring import episode_verdict

pytestmark = needs_bfcl_environment


class Scripted:
    """A model answering from a list, keeping every request it was sent."""

    default_model = "scripted"

    def __init__(self, replies: list[TurnResult]) -> None:
        self.replies = replies
        self.requests: list[TurnRequest] = []

    async def turn(self, request: TurnRequest) -> TurnResult:
        self.requests.append(request)
        return self.replies.pop(0) if self.replies else TurnResult(text="done")


def calls(*items: dict[str, Any]) -> TurnResult:
    return TurnResult(
        tool_calls=[
            ToolCall(id=f"c{i}", name=c["name"], arguments=c["arguments"]) for i, c in enumerate(items)
        ]
    )


def play(model: Scripted, played: Case | None = None) -> EpisodeOutcome:
    return asyncio.run(play_case(model, played or case(), "scripted"))


def tool_results(request: TurnRequest) -> list[ToolResultMessage]:
    return [m for m in request.messages if isinstance(m, ToolResultMessage)]


def test_the_model_gets_each_calls_real_answer_and_the_state_carries_across_turns() -> None:
    model = Scripted([calls(CD, MKDIR), TurnResult(text="ok"), TurnResult(text="no"), calls(CAT)])
    outcome = play(model)
    assert episode_verdict(case(), outcome.calls_per_turn, failed=False)["correct"] is True
    answers = [m.content for m in tool_results(model.requests[-1])]
    assert answers == ['{"current_working_directory": "docs"}', "None", '{"file_content": "hello"}']


def test_a_method_no_turn_offers_still_answers_as_in_bfcl() -> None:
    offered = {tool.name for tool in case().all_tools}
    assert "ls" not in offered
    model = Scripted([calls({"name": "ls", "arguments": {}})])
    play(model)
    (answer,) = tool_results(model.requests[1])
    assert answer.content == '{"current_directory_content": ["docs"]}' and not answer.is_error
    assert {tool.name for tool in model.requests[0].tools} == offered


def test_a_call_that_fails_goes_back_as_an_error_with_bfcls_text() -> None:
    model = Scripted(
        [calls({"name": "cd", "arguments": {"where": "docs"}}), calls({"name": "open", "arguments": {}})]
    )
    play(model)
    errors = tool_results(model.requests[2])
    assert [e.is_error for e in errors] == [True, True]
    assert errors[0].content.startswith(
        "Error during execution: GorillaFileSystem.cd() got an unexpected keyword"
    )
    assert errors[1].content == "unknown tool: open"  # the router's answer (the verdict runs it as BFCL does)


def test_tools_added_by_a_later_turn_are_offered_from_that_turn_on() -> None:
    raw = case().model_dump(mode="json")
    touch = next(t for t in raw["tools"] if t["name"] == "touch")
    raw["tools"].remove(touch)
    raw["follow_ups"][0]["added_tools"] = [touch]
    model = Scripted([])
    play(model, Case.model_validate(raw))
    offered = [{tool.name for tool in request.tools} for request in model.requests]
    assert "touch" not in offered[0] and "touch" in offered[1] and "touch" in offered[2]


def test_a_turn_that_keeps_calling_past_the_step_limit_ends_the_episode() -> None:
    raw = case().model_dump(mode="json")
    raw["environment"]["steps_per_turn"] = 3
    limited = Case.model_validate(raw)
    pwd = {"name": "pwd", "arguments": {}}
    model = Scripted([calls(pwd) for _ in range(4)])
    outcome = play(model, limited)
    assert len(model.requests) == 4 and len(outcome.calls_per_turn) == 1  # 3 steps, a 4th that calls: stop
    verdict = episode_verdict(limited, outcome.calls_per_turn, failed=False)
    assert verdict["correct"] is False and "stopped after 1 of 3 turns" in verdict["reason"]
    within = Scripted([calls(CD), calls(MKDIR), TurnResult(text="made"), TurnResult(text="no"), calls(CAT)])
    assert episode_verdict(limited, play(within, limited).calls_per_turn, failed=False)["correct"] is True
