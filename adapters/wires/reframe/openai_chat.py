"""OpenAI Chat Completions streams (and the servers that copy them, Mistral's included): a
recorded `chat.completion.chunk` stream read into its `chat.completion`, and a completion
streamed again in the shapes servers use (docs/stream-shapes.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from random import Random
from typing import Any

from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.reframe._cuts import interleave, text_cuts
from xpeval.adapters.wires.reframe._sse import events, frame, json_events

_ENVELOPE = ("id", "created", "model", "system_fingerprint", "service_tier")


@dataclass
class _Reading:
    """What a recorded stream's frames spell, read the plain way real servers stream: a call
    per index (a new id at an index is a new call), its name from its first piece."""

    head: JsonObject | None = None
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning: dict[str, list[str]] = field(default_factory=dict)
    calls: list[JsonObject] = field(default_factory=list)
    open: dict[Any, JsonObject] = field(default_factory=dict)
    finish: str | None = None
    finished: bool = False
    usage: Any = None

    def add(self, doc: JsonObject) -> None:
        self.head = self.head or doc
        if doc.get("usage"):
            self.usage = doc["usage"]
        for choice in doc.get("choices") or []:
            if choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta") or {}
            self.text.append(delta.get("content") or "")
            self.refusal.append(delta.get("refusal") or "")
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    self.reasoning.setdefault(key, []).append(delta[key])
            for piece in delta.get("tool_calls") or []:
                self._add_piece(piece)
            if choice.get("finish_reason") is not None:
                self.finish, self.finished = choice["finish_reason"], True

    def _add_piece(self, piece: JsonObject) -> None:
        index = piece.get("index")
        slot = self.open.get(index)
        if slot is None or (piece.get("id") and slot["id"] and piece["id"] != slot["id"]):
            slot = {"id": None, "name": "", "arguments": ""}
            self.calls.append(slot)
            self.open[index] = slot
        slot["id"] = slot["id"] or piece.get("id") or None
        function = piece.get("function") or {}
        slot["name"] = slot["name"] or function.get("name") or ""
        slot["arguments"] += function.get("arguments") or ""

    def completion(self) -> JsonObject:
        assert self.head is not None
        message: JsonObject = {
            "role": "assistant",
            "content": "".join(self.text) or None,
            "refusal": "".join(self.refusal) or None,
        }
        for key, pieces in self.reasoning.items():
            message[key] = "".join(pieces)
        if self.calls:
            message["tool_calls"] = [
                {
                    **({"id": c["id"]} if c["id"] else {}),
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in self.calls
            ]
        envelope = {k: self.head[k] for k in _ENVELOPE if k in self.head}
        return {
            **envelope,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
        }


class ChatReframer:
    def __init__(self, *, calls_whole: bool = False) -> None:
        self.calls_whole = calls_whole
        """Every call in one piece (name and whole arguments): Mistral's stream, whose SDK's
        schema requires both on every piece."""

    def whole(self, body: bytes) -> JsonObject | None:
        parsed = json_events(body)
        if parsed is None:
            return None
        reading = _Reading()
        for _event, doc in parsed:
            if not isinstance(doc, dict) or doc.get("error"):
                return None
            reading.add(doc)
        done = any(data.strip() == "[DONE]" for _event, data in events(body))
        if reading.head is None or not (reading.finished or done):
            return None
        return reading.completion()

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        choice = whole["choices"][0]
        message = choice.get("message") or {}
        envelope = {k: whole[k] for k in _ENVELOPE if k in whole}
        envelope["object"] = "chat.completion.chunk"
        deltas: list[JsonObject] = [{"role": "assistant", "content": rng.choice(["", None])}]
        for key in ("reasoning_content", "reasoning"):
            if message.get(key):
                deltas += [{key: piece} for piece in text_cuts(message[key], rng)]
        if message.get("content"):
            deltas += [{"content": piece} for piece in text_cuts(message["content"], rng)]
        if message.get("refusal"):
            deltas += [{"refusal": piece} for piece in text_cuts(message["refusal"], rng)]
        calls = message.get("tool_calls") or []
        pieces = _whole_calls(calls, rng) if self.calls_whole else _call_pieces(calls, rng)
        deltas += _packed(pieces, rng)
        return _frames(envelope, deltas, choice.get("finish_reason"), whole.get("usage"), rng)


def _complete(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return arguments.rstrip().endswith(("}", "]"))


def _index_scheme(calls: list[JsonObject], rng: Random) -> str:
    """How the calls are numbered: `distinct` (OpenAI), `zero` (every call at index 0: Ollama,
    sglang's gemma4 parser) or `none` (no index at all). Shared or missing indices are drawn only
    where the calls stay tellable apart: each has an id, or each but the last has whole JSON
    arguments (the same tool twice at one index is otherwise one call to anyone)."""
    scheme = rng.choice(["distinct", "distinct", "zero", "none"])
    tellable = all(c.get("id") for c in calls) or all(
        _complete(c["function"].get("arguments") or "") for c in calls[:-1]
    )
    return scheme if tellable else "distinct"


def _call_pieces(calls: list[JsonObject], rng: Random) -> list[JsonObject]:
    """Every call as its pieces: a head (id, name; the first argument text or none: name and
    arguments in separate chunks), then argument pieces, the id and name repeated on every piece
    or only on the first; interleaved across calls when each has its own index."""
    scheme = _index_scheme(calls, rng)
    repeat = rng.random() < 0.25 and all(c.get("id") for c in calls)
    apart = rng.random() < 0.5
    sequences: list[list[JsonObject]] = []
    for position, call in enumerate(calls):
        index = {"distinct": position, "zero": 0, "none": None}[scheme]
        function = call.get("function") or {}
        arguments = text_cuts(function.get("arguments") or "", rng)
        head: JsonObject = {"type": "function", "function": {"name": function.get("name") or ""}}
        if call.get("id"):
            head["id"] = call["id"]
        if not apart:
            head["function"]["arguments"] = arguments.pop(0)
        elif rng.random() < 0.5:
            head["function"]["arguments"] = ""
        pieces = [head]
        for text in arguments:
            piece: JsonObject = {"function": {"arguments": text}}
            if repeat:
                piece = {"id": call["id"], "function": {"name": function.get("name"), "arguments": text}}
            pieces.append(piece)
        if index is not None:
            for piece in pieces:
                piece["index"] = index
        sequences.append(pieces)
    if scheme == "distinct" and rng.random() < 0.5:
        return interleave(sequences, rng)
    return [piece for pieces in sequences for piece in pieces]


def _whole_calls(calls: list[JsonObject], rng: Random) -> list[JsonObject]:
    """Every call as one piece, at its own index or every one at index 0."""
    scheme = _index_scheme(calls, rng)
    return [
        {**call, "index": position if scheme == "distinct" else 0} if scheme != "none" else dict(call)
        for position, call in enumerate(calls)
    ]


def _packed(pieces: list[JsonObject], rng: Random) -> list[JsonObject]:
    """Call pieces as deltas: one piece a delta, or several consecutive pieces in one delta's
    list (frames merged)."""
    deltas: list[JsonObject] = []
    position = 0
    while position < len(pieces):
        size = rng.choice([1, 1, 1, 2, 3])
        deltas.append({"tool_calls": pieces[position : position + size]})
        position += size
    return deltas


def _frames(
    envelope: JsonObject, deltas: list[JsonObject], finish: str | None, usage: Any, rng: Random
) -> list[bytes]:
    """The chunks: the finish reason on the last delta or in a chunk of its own; usage in a last
    chunk without choices (`include_usage`) or on the finish chunk; `[DONE]` at the end."""
    chunks: list[JsonObject] = [{"index": 0, "delta": delta, "finish_reason": None} for delta in deltas]
    if rng.random() < 0.5:
        chunks[-1]["finish_reason"] = finish
    else:
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
    frames = [{**envelope, "choices": [choice]} for choice in chunks]
    if usage:
        if rng.random() < 0.7:
            frames.append({**envelope, "choices": [], "usage": usage})
        else:
            frames[-1]["usage"] = usage
    return [*(frame(f) for f in frames), frame("[DONE]")]


REFRAMER = ChatReframer()
MISTRAL = ChatReframer(calls_whole=True)
