"""Anthropic Messages streams: a recorded event stream read into the `message` it spells, and a
message streamed again with its text, thinking and tool input cut into other deltas (an empty
`input_json_delta` among them), `ping`s between, and its usage split between `message_start`
and `message_delta` as the API splits it (or all of it again in `message_delta`, as later API
versions send it)."""

from __future__ import annotations

import copy
import json
from random import Random
from typing import Any

from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.reframe._cuts import text_cuts
from xpeval.adapters.wires.reframe._sse import frame, json_events

_GROWN = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking")}


class _Reading:
    def __init__(self) -> None:
        self.message: JsonObject | None = None
        self.blocks: dict[int, JsonObject] = {}
        self.json: dict[int, str] = {}
        self.stopped = False

    def add(self, kind: Any, doc: JsonObject) -> None:
        if kind == "message_start":
            self.message = copy.deepcopy(doc.get("message"))
        elif kind == "content_block_start":
            self.blocks[doc["index"]] = copy.deepcopy(doc["content_block"])
        elif kind == "content_block_delta":
            self._delta(doc["index"], doc.get("delta") or {})
        elif kind == "message_delta" and isinstance(self.message, dict):
            self.message.update({k: v for k, v in (doc.get("delta") or {}).items() if v is not None})
            usage = {k: v for k, v in (doc.get("usage") or {}).items() if v}
            self.message["usage"] = {**(self.message.get("usage") or {}), **usage}
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: JsonObject) -> None:
        block = self.blocks[index]
        kind = delta.get("type")
        if kind in _GROWN:
            field, key = _GROWN[kind]
            block[field] = (block.get(field) or "") + (delta.get(key) or "")
        elif kind == "input_json_delta":
            self.json[index] = self.json.get(index, "") + (delta.get("partial_json") or "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")

    def message_whole(self) -> JsonObject | None:
        if not isinstance(self.message, dict) or not self.stopped:
            return None
        for index, raw in self.json.items():
            try:
                self.blocks[index]["input"] = json.loads(raw) if raw.strip() else {}
            except ValueError:
                return None  # broken input JSON has no whole form to compare with
        self.message["content"] = [self.blocks[i] for i in sorted(self.blocks)]
        return self.message


class AnthropicReframer:
    def whole(self, body: bytes) -> JsonObject | None:
        parsed = json_events(body)
        if parsed is None:
            return None
        reading = _Reading()
        for event, doc in parsed:
            kind = doc.get("type", event) if isinstance(doc, dict) else None
            if kind == "error" or not isinstance(doc, dict):
                return None
            try:
                reading.add(kind, doc)
            except (KeyError, TypeError):
                return None
        return reading.message_whole()

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        usage = dict(whole.get("usage") or {})
        later_all = rng.random() < 0.5
        opening_usage = (
            {**usage, "output_tokens": min(1, usage["output_tokens"] or 0)}
            if "output_tokens" in usage
            else usage
        )
        opening = {**whole, "content": [], "stop_reason": None, "stop_sequence": None, "usage": opening_usage}
        events: list[JsonObject] = [{"type": "message_start", "message": opening}]
        for index, block in enumerate(whole.get("content") or []):
            events += _block_events(index, block, rng)
            if rng.random() < 0.2:
                events.append({"type": "ping"})
        closing = usage if later_all else {k: v for k, v in usage.items() if k == "output_tokens"}
        delta = {"stop_reason": whole.get("stop_reason"), "stop_sequence": whole.get("stop_sequence")}
        events += [{"type": "message_delta", "delta": delta, "usage": closing}, {"type": "message_stop"}]
        return [frame(e, e["type"]) for e in events]


def _block_events(index: int, block: JsonObject, rng: Random) -> list[JsonObject]:
    kind = block.get("type")
    deltas: list[JsonObject] = []
    if kind == "text":
        opened = {**block, "text": ""}
        deltas = [{"type": "text_delta", "text": t} for t in text_cuts(block.get("text") or "", rng)]
    elif kind == "thinking":
        opened = {**block, "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": t} for t in text_cuts(block.get("thinking") or "", rng)
        ]
        if block.get("signature"):
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        opened = {**block, "input": {}}
        raw = json.dumps(block.get("input") or {}, ensure_ascii=False) if block.get("input") else ""
        pieces = text_cuts(raw, rng)
        if rng.random() < 0.3:
            pieces.insert(0, "")
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    else:
        opened = block
    starts = [{"type": "content_block_start", "index": index, "content_block": opened}]
    middle = [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
    return [*starts, *middle, {"type": "content_block_stop", "index": index}]


REFRAMER = AnthropicReframer()
