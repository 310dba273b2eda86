"""What the emulator answers for a case: the replies of a model that gets everything right.

An emulated run therefore scores what the pipeline does with correct answers (encoding,
transport, decoding, the agent loop, scoring), never what any provider would answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx2

from xpeval.adapters.contract import ToolCall, TurnResult, Usage
from xpeval.evals.cases import Case
from xpeval.evals.cases.model import is_multi_step
from xpeval.evals.cases.schema_root import root_properties, root_required
from xpeval.evals.emulator.script import Reply
from xpeval.evals.emulator.server import DEFAULT_SCRIPT, EmulatorServer
from xpeval.evals.emulator.strict import with_state

if TYPE_CHECKING:
    from xpeval.evals.emulator.remote import RemoteEmulator

DONE_TEXT = "Done."
NO_TOOL_TEXT = "None of the available tools applies to this request."


def replies_for(case: Case, from_turn: int = 0) -> list[TurnResult]:
    """The emulator's replies for `case`, in the order the adapter will ask for them.

    Each user turn that expects calls gets the calls, then (once the results are back) a short
    text answer; a turn that expects no call gets a text answer. In a case with an environment
    the calls are the turn's ground truth, all in one step (their results come from the
    environment; an empty ground truth is a text answer). `from_turn`: the replies from that
    user turn on (an adapter the case hands the conversation to at that turn). A task case's
    replies play both its user and its agent (`xpeval.evals.emulator.task_script`). A turn
    that any call answers (relevance) calls the first tool offered, with `example_arguments`.
    """
    if case.task is not None:
        from xpeval.evals.emulator.task_script import task_replies

        return task_replies(case)
    replies: list[TurnResult] = []
    for turn in case.turns[from_turn:]:
        prompt_tokens = 10 * (turn.index + 1)
        usage = Usage(input_tokens=prompt_tokens, output_tokens=5, total_tokens=prompt_tokens + 5)
        if turn.expected is None or turn.expected.no_call or turn.expected.ground_truth == []:
            replies.append(TurnResult(text=NO_TOOL_TEXT, usage=usage))  # unlabelled: no right answer
            continue
        if turn.expected.any_call:
            tool = case.offered_tools(turn.index)[0]
            answer = [(tool.name, example_arguments(tool.parameters))]
        elif turn.expected.ground_truth is not None:
            answer = [(call.name, dict(call.arguments)) for call in turn.expected.ground_truth]
        else:
            answer = [(call.name, call.canonical_arguments()) for call in turn.expected.calls]
        calls = [
            ToolCall(id=f"call_{turn.index}_{index}", name=name, arguments=arguments)
            for index, (name, arguments) in enumerate(answer)
        ]
        replies.append(TurnResult(tool_calls=calls, usage=usage))
        if is_multi_step(case.category):
            replies.append(TurnResult(text=DONE_TEXT, usage=usage))
    return replies


_EXAMPLES: dict[str, Any] = {
    "string": "example",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "null": None,
}


def example_arguments(schema: Any) -> dict[str, Any]:
    """Arguments for a call of a tool with this parameter schema: each required argument with its
    default, its first enum value or a value of its type (an object's own required ones filled
    in the same way). Deterministic, so a relevance case's emulated answer is always the same."""
    properties = root_properties(schema)
    return {name: _example(properties.get(name)) for name in root_required(schema)}


def _example(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "example"
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    if kind == "object":
        return example_arguments(schema)
    return _EXAMPLES.get(str(kind), "example")


class CaseEmulator:
    """The emulator as the runner's target: each episode gets its own script on one server
    (this process's, or one at a loopback URL: `RemoteEmulator`), and every episode of a run
    reaches it through one connection pool."""

    def __init__(self, server: EmulatorServer | RemoteEmulator) -> None:
        self.server = server
        self._pool: httpx2.AsyncBaseTransport | None = None

    def upstream_for(self, case: Case, adapter_id: str) -> httpx2.AsyncBaseTransport:
        return self.upstream_from(case, adapter_id, 0)

    def upstream_from(self, case: Case, adapter_id: str, turn: int) -> httpx2.AsyncBaseTransport:
        """`upstream_for` an adapter that plays `case` from user turn `turn` on (a handoff)."""
        script = self.register(case, adapter_id, turn=turn)
        return self.server.transport(script, pool=self.pool())

    def register(
        self,
        case: Case,
        adapter_id: str,
        name: str | None = None,
        *,
        turn: int = 0,
        reply: int | None = None,
    ) -> str:
        """The case's replies from user turn `turn` on as a script (named `name`: a batch
        request's custom id). `reply`: only the episode's reply to its request of that index
        (from 0), the script of one round of a multi-turn episode's batched turns."""
        replies = replies_for(case, turn)
        if self.server.strict:
            # A strict emulator is a provider with reasoning on: its replies carry the wire's state.
            from xpeval.adapters.registry import effective_contract
            from xpeval.adapters.wires import get_wire

            conversation = case.id if turn == 0 else f"{case.id}@{turn}"
            replies = with_state(get_wire(effective_contract(adapter_id).wire), replies, conversation)
        if reply is not None:
            replies = replies[reply : reply + 1]
        return self.server.script([Reply(result=result) for result in replies], name=name)

    def batch_transport(self) -> httpx2.AsyncBaseTransport:
        """Where a run's Batch API calls go (files, batches, results): the same server."""
        return self.server.transport(DEFAULT_SCRIPT, pool=self.pool())

    def pool(self) -> httpx2.AsyncBaseTransport:
        if self._pool is None:
            from xpeval.evals.running.episode_transport import upstream_pool

            self._pool = upstream_pool()
        return self._pool

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.aclose()
