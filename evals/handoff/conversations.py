"""Recorded multi-turn conversations with tool calls, read back as canonical history.

A cassette of a tool loop holds one request and one reply per model turn. The history a later
turn was sent is rebuilt from it: each reply decoded by its adapter's wire (so its reasoning
state is what the codec keeps), and between two replies what the caller added, read from the
next request (`recorded_history.request_tail`). The last request's history is the conversation
handed to another adapter; its tools are the ones it offered. A cassette that is not one
conversation of tool calls and results is skipped with the reason.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xpeval.adapters.contract import AssistantMessage, Message, ToolResultMessage, ToolSpec, TurnResult
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.wires.recorded_history import READABLE_WIRES, request_tail, request_tools
from xpeval.errors import UserError
from xpeval.evals.cassettes.decode import decode_interaction
from xpeval.evals.cassettes.format import Interaction, load_cassette

MAX_INTERACTIONS = 32
"""Turns read from one cassette: a tool loop longer than this is not a conversation to hand off."""


@dataclass(frozen=True)
class RecordedConversation:
    """A conversation recorded through `source`: the history its last request carried."""

    id: str
    """The cassette's path as given (relative to where it was found)."""
    source: str
    """The adapter it was recorded through."""
    messages: list[Message]
    tools: list[ToolSpec]
    calls: int
    """Tool calls in the history."""


@dataclass(frozen=True)
class Skipped:
    """A cassette that holds no conversation to hand off, and why."""

    id: str
    source: str
    reason: str


def _answering(reply: TurnResult, tail: Sequence[Message]) -> list[Message] | None:
    """A request's new messages as answers to the reply before it: each tool result pointed at
    the reply's call it answers (by id, or the first unanswered call of its name when the wire
    sent the id in another form, as Mistral's does); None when they do not answer it."""
    results = [m for m in tail if isinstance(m, ToolResultMessage)]
    if not reply.tool_calls:
        return list(tail) if not results else None
    unanswered = [(call.id, call.name) for call in reply.tool_calls]
    out: list[Message] = []
    for message in tail:
        if isinstance(message, ToolResultMessage):
            match = next((p for p in unanswered if p[0] is not None and p[0] == message.tool_call_id), None)
            match = match or next((p for p in unanswered if p[1] == message.name), None)
            match = match or (unanswered[0] if unanswered and not message.name else None)
            if match is None:
                return None
            unanswered.remove(match)
            message = message.model_copy(update={"tool_call_id": match[0], "name": match[1]})
        out.append(message)
    return out if results else None


async def _history(interactions: Sequence[Interaction], wire: str) -> list[Message] | str:
    messages: list[Message] = list(request_tail(wire, interactions[0].request_json()))
    if any(isinstance(m, (AssistantMessage, ToolResultMessage)) for m in messages):
        return "its first request already carries tool results"
    for index, (interaction, following) in enumerate(itertools.pairwise(interactions)):
        if interaction.status != 200:
            return f"interaction {index} answered {interaction.status}"
        reply = await decode_interaction(interaction, wire)
        if reply.error is not None:
            return f"interaction {index} does not decode: {reply.error.message}"
        tail = _answering(reply, request_tail(wire, following.request_json()))
        if tail is None:
            return f"interaction {index + 1} does not continue interaction {index}"
        messages += [reply.to_message(), *tail]
    return messages


def load_conversation(
    path: Path, source: str, label: str | None = None, tools: Sequence[ToolSpec] | None = None
) -> RecordedConversation | Skipped:
    """The conversation a cassette recorded through adapter `source`, or why it holds none.
    `tools`: the tools as the case defines them (default: as the last request sent them, after
    the source's dialect rewrote them)."""
    name = label or str(path)
    wire = effective_contract(source).wire
    if wire not in READABLE_WIRES:
        return Skipped(name, source, f"{wire} requests are not readable")
    try:
        interactions = load_cassette(path)
    except UserError as exc:
        return Skipped(name, source, str(exc))
    if len(interactions) < 2:
        return Skipped(name, source, "one interaction: no tool result went back")
    if len(interactions) > MAX_INTERACTIONS:
        return Skipped(name, source, f"more than {MAX_INTERACTIONS} interactions")
    try:
        history = asyncio.run(_history(interactions, wire))
        offered = list(tools) if tools is not None else request_tools(wire, interactions[-1].request_json())
    except (ValueError, TypeError) as exc:
        return Skipped(name, source, f"not readable: {exc}")
    if isinstance(history, str):
        return Skipped(name, source, history)
    calls = sum(len(m.tool_calls) for m in history if isinstance(m, AssistantMessage))
    if not calls or not any(isinstance(m, ToolResultMessage) for m in history):
        return Skipped(name, source, "no tool call and result in the history")
    return RecordedConversation(id=name, source=source, messages=history, tools=offered, calls=calls)


def cassette_conversations(
    root: Path,
    adapters: Iterable[str],
    case_tools: Mapping[str, Sequence[ToolSpec]],
    per_source: int | None = None,
) -> list[RecordedConversation | Skipped]:
    """The conversations of a cassette tree laid out `<adapter>/<model>/<case>.yaml` (the
    project's `cassettes/`) of the cases in `case_tools` (case id -> its tools), for each of
    `adapters`, the first `per_source` of each."""
    found: list[RecordedConversation | Skipped] = []
    for adapter in adapters:
        paths = sorted(p for p in (root / adapter).glob("*/*.yaml") if p.stem in case_tools)
        taken = 0
        for path in paths:
            if per_source is not None and taken >= per_source:
                break
            label = f"{root.name}/{path.relative_to(root)}"
            loaded = load_conversation(path, adapter, label, case_tools[path.stem])
            found.append(loaded)
            taken += isinstance(loaded, RecordedConversation)
    return found


def corpus_conversations(root: Path, wire_adapters: dict[str, str]) -> list[RecordedConversation | Skipped]:
    """The conversations of a recordings tree laid out `<wire>/<file>.yaml[.gz]` (the shared
    corpus), each read through the direct adapter of its wire (`wire_adapters`: folder ->
    adapter)."""
    found: list[RecordedConversation | Skipped] = []
    for folder, adapter in sorted(wire_adapters.items()):
        for path in sorted((root / folder).glob("*.yaml*")):
            label = f"{root.parent.name}/{root.name}/{folder}/{path.name}"
            found.append(load_conversation(path, adapter, label))
    return found


__all__ = [
    "RecordedConversation",
    "Skipped",
    "cassette_conversations",
    "corpus_conversations",
    "load_conversation",
]
