"""A task's conversation: the user model and the agent alternate through one adapter, the agent's
calls run against the store, and the conversation ends when the user says STOP, after the
turn bound, when the agent keeps calling, or on an error."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from tests.tasks._retail import retail_tasks
from xpeval.adapters.contract import (
    AssistantMessage,
    ProviderError,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from xpeval.evals.cases.task import STOP
from xpeval.evals.running.play import EpisodeOutcome, play_case
from xpeval.evals.running.play_task import SILENT
from xpeval.evals.running.simulated_user import GREETING
from xpeval.evals.verdict.scoring import episode_verdict

CANCEL = retail_tasks()["retail_cancel_pending_order"]


@dataclass
class TwoSides:
    """One adapter answering both models: a request without tools is the user model's."""

    user: list[TurnResult]
    agent: list[TurnResult]
    default_model: str = "scripted"
    requests: list[TurnRequest] = field(default_factory=list)

    async def turn(self, request: TurnRequest) -> TurnResult:
        self.requests.append(request)
        side = self.agent if request.tools else self.user
        return side.pop(0) if side else TurnResult(text="Anything else?" if request.tools else "Hello?")

    def user_requests(self) -> list[TurnRequest]:
        return [r for r in self.requests if not r.tools]


def says(text: str) -> TurnResult:
    return TurnResult(text=text)


def calls(*items: tuple[str, dict[str, Any]]) -> TurnResult:
    return TurnResult(
        tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(items)]
    )


def play(adapter: TwoSides, case: Any = CANCEL) -> EpisodeOutcome:
    return asyncio.run(play_case(adapter, case, "scripted"))


def right_conversation() -> TwoSides:
    return TwoSides(
        user=[
            says("Cancel my order #W1001, I'm mei.tanaka@example.com."),
            says("Yes, go ahead."),
            says(STOP),
        ],
        agent=[
            calls(("find_user_id_by_email", {"email": "mei.tanaka@example.com"})),
            calls(("get_order_details", {"order_id": "#W1001"})),
            says("Order #W1001 totals 44.49. Cancel it as no longer needed?"),
            calls(("cancel_pending_order", {"order_id": "#W1001", "reason": "no longer needed"})),
            says("Done: 44.49 is back on your gift card."),
        ],
    )


def test_the_user_and_the_agent_alternate_until_the_user_says_stop() -> None:
    adapter = right_conversation()
    outcome = play(adapter)
    assert outcome.ended == "user_stop" and outcome.error is None
    assert outcome.said == [
        "Order #W1001 totals 44.49. Cancel it as no longer needed?",
        "Done: 44.49 is back on your gift card.",
    ]
    assert [[c.name for c in turn] for turn in outcome.calls_per_turn] == [
        ["find_user_id_by_email", "get_order_details"],
        ["cancel_pending_order"],
    ]
    assert outcome.steps == 8  # 5 agent steps, 3 user replies
    verdict = episode_verdict(CANCEL, outcome.calls_per_turn, False, said=outcome.said, ended=outcome.ended)
    assert verdict["correct"] is True, verdict["reason"]


def test_the_user_model_sees_its_scenario_and_the_conversation_from_its_side() -> None:
    adapter = right_conversation()
    play(adapter)
    first, *_, last = adapter.user_requests()
    assert first.tools == [] and isinstance(first.messages[0], SystemMessage)
    assert CANCEL.task is not None and CANCEL.task.user.instructions in first.messages[0].content
    assert STOP in first.messages[0].content
    assert first.messages[1:] == [UserMessage(content=GREETING)]
    assert last.messages[2:] == [
        AssistantMessage(content="Cancel my order #W1001, I'm mei.tanaka@example.com."),
        UserMessage(content="Order #W1001 totals 44.49. Cancel it as no longer needed?"),
        AssistantMessage(content="Yes, go ahead."),
        UserMessage(content="Done: 44.49 is back on your gift card."),
    ]


def test_the_agent_gets_the_policy_the_users_words_and_the_stores_real_answers() -> None:
    adapter = right_conversation()
    play(adapter)
    agent = [r for r in adapter.requests if r.tools]
    assert agent[0].messages == [
        *CANCEL.messages,
        UserMessage(content="Cancel my order #W1001, I'm mei.tanaka@example.com."),
    ]
    results = [m for m in agent[-1].messages if isinstance(m, ToolResultMessage)]
    assert results[0].content == "mei_tanaka_4821"
    assert '"status": "pending"' in results[1].content and '"status": "cancelled"' in results[2].content
    assert {tool.name for tool in agent[0].tools} == {tool.name for tool in CANCEL.tools}


def test_a_conversation_the_user_never_ends_stops_after_max_turns_with_reward_0() -> None:
    assert CANCEL.task is not None
    adapter = TwoSides(user=[], agent=[])
    outcome = play(adapter)
    assert outcome.ended == "max_turns" and len(adapter.user_requests()) == CANCEL.task.max_turns
    verdict = episode_verdict(CANCEL, outcome.calls_per_turn, False, said=outcome.said, ended=outcome.ended)
    assert verdict["correct"] is False and "ended by max_turns" in verdict["reason"]


def test_an_agent_that_keeps_calling_ends_the_conversation() -> None:
    assert CANCEL.environment is not None
    looping = [calls(("get_order_details", {"order_id": "#W1001"}))] * (CANCEL.environment.steps_per_turn + 5)
    adapter = TwoSides(user=[says("Where is #W1001?")], agent=list(looping))
    outcome = play(adapter)
    assert outcome.ended == "max_steps"
    assert len(outcome.calls_per_turn[0]) == CANCEL.environment.steps_per_turn + 1


def test_an_error_on_the_user_side_ends_the_conversation_as_an_error() -> None:
    error = ProviderError(kind="http", status=500, message="boom")
    adapter = TwoSides(user=[TurnResult(error=error)], agent=[])
    outcome = play(adapter)
    assert (outcome.ended, outcome.error) == ("error", error)
    assert [r for r in adapter.requests if r.tools] == []


def test_a_side_that_writes_no_text_is_heard_as_no_answer() -> None:
    adapter = TwoSides(user=[TurnResult(text=None), says(STOP)], agent=[says("")])
    outcome = play(adapter)
    agent_request = next(r for r in adapter.requests if r.tools)
    assert agent_request.messages[-1] == UserMessage(content=SILENT)
    assert adapter.user_requests()[-1].messages[-1] == UserMessage(content=SILENT)
    assert outcome.ended == "user_stop" and outcome.said == []
