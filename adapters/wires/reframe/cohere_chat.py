"""Cohere v2 chat streams (`xpeval/bundled/cohere_chat.py`): a recorded event stream read into
the chat response it spells, and a response streamed again with its text, tool plan and
arguments cut into other deltas, the name and arguments of a call in separate events or not,
and the deltas of parallel calls interleaved (each call has its own `index`)."""

from __future__ import annotations

import copy
from random import Random
from typing import Any

from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.reframe._cuts import interleave, text_cuts
from xpeval.adapters.wires.reframe._sse import frame, json_events


class _Reading:
    def __init__(self) -> None:
        self.id: Any = None
        self.content: dict[Any, JsonObject] = {}
        self.plan: list[str] = []
        self.calls: dict[Any, JsonObject] = {}
        self.end: JsonObject | None = None

    def add(self, kind: Any, doc: JsonObject) -> None:
        message = (doc.get("delta") or {}).get("message") or {}
        index = doc.get("index")
        if kind == "message-start":
            self.id = doc.get("id")
        elif kind in ("content-start", "content-delta"):
            self._content(index, message.get("content") or {})
        elif kind == "tool-plan-delta":
            self.plan.append(str(message.get("tool_plan") or ""))
        elif kind in ("tool-call-start", "tool-call-delta"):
            self._call(index, message.get("tool_calls") or {})
        elif kind == "message-end":
            self.end = doc.get("delta") or {}

    def _content(self, index: Any, part: JsonObject) -> None:
        block = self.content.setdefault(index, {"type": part.get("type") or "text"})
        for key in ("text", "thinking"):
            if isinstance(part.get(key), str):
                block[key] = block.get(key, "") + part[key]

    def _call(self, index: Any, piece: JsonObject) -> None:
        empty = {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
        call = self.calls.setdefault(index, empty)
        call["id"] = call["id"] or piece.get("id")
        function = piece.get("function") or {}
        call["function"]["name"] = call["function"]["name"] or function.get("name") or ""
        call["function"]["arguments"] += function.get("arguments") or ""

    def response(self) -> JsonObject | None:
        if self.end is None or self.end.get("error") or self.end.get("finish_reason") == "ERROR":
            return None
        message: JsonObject = {"role": "assistant", "content": [self.content[i] for i in self.content]}
        if self.plan:
            message["tool_plan"] = "".join(self.plan)
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in self.calls]
        return {
            "id": self.id,
            "finish_reason": self.end.get("finish_reason"),
            "message": message,
            "usage": self.end.get("usage"),
        }


class CohereReframer:
    def whole(self, body: bytes) -> JsonObject | None:
        parsed = json_events(body)
        if parsed is None:
            return None
        reading = _Reading()
        for event, doc in parsed:
            if not isinstance(doc, dict):
                return None
            reading.add(doc.get("type", event), doc)
        return reading.response()

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        message = whole.get("message") or {}
        opening = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
        events: list[JsonObject] = [
            {"type": "message-start", "id": whole.get("id"), "delta": {"message": opening}}
        ]
        if message.get("tool_plan"):
            events += [
                _at(None, "tool-plan-delta", {"tool_plan": p}) for p in text_cuts(message["tool_plan"], rng)
            ]
        for index, part in enumerate(message.get("content") or []):
            events += _content_events(index, part, rng)
        calls = [_call_events(index, call, rng) for index, call in enumerate(message.get("tool_calls") or [])]
        events += interleave(calls, rng) if rng.random() < 0.5 else [e for c in calls for e in c]
        end = {"finish_reason": whole.get("finish_reason"), "usage": whole.get("usage")}
        events.append({"type": "message-end", "delta": end})
        return [frame(e, e["type"]) for e in events]


def _at(index: int | None, kind: str, message: JsonObject) -> JsonObject:
    event: JsonObject = {"type": kind, "delta": {"message": message}}
    if index is not None:
        event["index"] = index
    return event


def _content_events(index: int, part: JsonObject, rng: Random) -> list[JsonObject]:
    key = "thinking" if part.get("type") == "thinking" else "text"
    pieces = text_cuts(str(part.get(key) or ""), rng)
    events = [
        _at(index, "content-start", {"content": {"type": part.get("type") or "text", key: pieces.pop(0)}})
    ]
    events += [_at(index, "content-delta", {"content": {key: p}}) for p in pieces]
    return [*events, {"type": "content-end", "index": index}]


def _call_events(index: int, call: JsonObject, rng: Random) -> list[JsonObject]:
    function = call.get("function") or {}
    pieces = text_cuts(str(function.get("arguments") or ""), rng)
    first = "" if rng.random() < 0.5 else pieces.pop(0)
    head = copy.deepcopy(call)
    head["function"] = {"name": function.get("name"), "arguments": first}
    events = [_at(index, "tool-call-start", {"tool_calls": head})]
    events += [_at(index, "tool-call-delta", {"tool_calls": {"function": {"arguments": p}}}) for p in pieces]
    return [*events, {"type": "tool-call-end", "index": index}]


REFRAMER = CohereReframer()
