"""Bedrock ConverseStream streams (`xpeval/bundled/bedrock_converse.py`, AWS eventstream binary
frames): a recorded stream read into the Converse response it spells, and a response streamed
again with its text, reasoning and tool input cut into other deltas, a tool call's first delta
empty or not, and the `metadata` event (usage) last as Bedrock sends it."""

from __future__ import annotations

import copy
import json
import struct
import zlib
from random import Random
from typing import Any

from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.reframe._cuts import text_cuts


def _messages(body: bytes) -> list[tuple[str, Any]] | None:
    """(event type, JSON payload) of every frame; None when the body is not whole frames of
    events (an exception frame, a broken CRC, a cut frame)."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(body)
    found = []
    try:
        for message in buffer:
            if message.headers.get(":message-type") != "event":
                return None
            found.append((str(message.headers.get(":event-type")), json.loads(message.payload or b"{}")))
    except Exception:  # botocore's parser errors have no common base; any is "not whole frames"
        return None
    return found


class _Reading:
    def __init__(self) -> None:
        self.blocks: dict[int, JsonObject] = {}
        self.inputs: dict[int, str] = {}
        self.stop: Any = None
        self.metadata: JsonObject = {}

    def add(self, kind: str, payload: JsonObject) -> None:
        index = payload.get("contentBlockIndex", 0)
        if kind == "contentBlockStart":
            use = (payload.get("start") or {}).get("toolUse")
            if isinstance(use, dict):
                self.blocks[index] = {"toolUse": {**use, "input": {}}}
                self.inputs[index] = ""
        elif kind == "contentBlockDelta":
            self._delta(index, payload.get("delta") or {})
        elif kind == "messageStop":
            self.stop = payload.get("stopReason")
        elif kind == "metadata":
            self.metadata = {k: v for k, v in payload.items() if k in ("usage", "metrics")}

    def _delta(self, index: int, delta: JsonObject) -> None:
        if isinstance(delta.get("text"), str):
            block = self.blocks.setdefault(index, {"text": ""})
            block["text"] = block.get("text", "") + delta["text"]
        elif isinstance(delta.get("toolUse"), dict):
            self.inputs[index] = self.inputs.get(index, "") + str(delta["toolUse"].get("input") or "")
        elif isinstance(delta.get("reasoningContent"), dict):
            block = self.blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
            text = block["reasoningContent"].setdefault("reasoningText", {"text": ""})
            piece = delta["reasoningContent"]
            text["text"] = text.get("text", "") + str(piece.get("text") or "")
            if piece.get("signature"):
                text["signature"] = piece["signature"]

    def response(self) -> JsonObject | None:
        if self.stop is None:
            return None
        for index, raw in self.inputs.items():
            try:
                self.blocks[index]["toolUse"]["input"] = json.loads(raw) if raw.strip() else {}
            except ValueError:
                return None  # broken input JSON has no whole form to compare with
        content = [self.blocks[i] for i in sorted(self.blocks)]
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": self.stop,
            **self.metadata,
        }


class BedrockReframer:
    def whole(self, body: bytes) -> JsonObject | None:
        messages = _messages(body)
        if not messages:
            return None
        reading = _Reading()
        for kind, payload in messages:
            if not isinstance(payload, dict):
                return None
            reading.add(kind, payload)
        return reading.response()

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        events: list[tuple[str, JsonObject]] = [("messageStart", {"role": "assistant"})]
        for index, block in enumerate(
            ((whole.get("output") or {}).get("message") or {}).get("content") or []
        ):
            events += _block_events(index, block, rng)
        events.append(("messageStop", {"stopReason": whole.get("stopReason")}))
        metadata: JsonObject = {k: whole[k] for k in ("usage", "metrics") if k in whole}
        if metadata:
            events.append(("metadata", metadata))
        return [_frame(kind, payload) for kind, payload in events]


def _block_events(index: int, block: JsonObject, rng: Random) -> list[tuple[str, JsonObject]]:
    at = {"contentBlockIndex": index}
    deltas: list[JsonObject] = []
    events: list[tuple[str, JsonObject]] = []
    if isinstance(block.get("text"), str):
        deltas = [{"text": t} for t in text_cuts(block["text"], rng)]
    elif isinstance(block.get("toolUse"), dict):
        use = copy.deepcopy(block["toolUse"])
        raw = json.dumps(use.pop("input", {}) or {}, ensure_ascii=False)
        events.append(("contentBlockStart", {**at, "start": {"toolUse": use}}))
        pieces = text_cuts(raw, rng)
        if rng.random() < 0.5:
            pieces.insert(0, "")
        deltas = [{"toolUse": {"input": p}} for p in pieces]
    elif isinstance((block.get("reasoningContent") or {}).get("reasoningText"), dict):
        reasoning = block["reasoningContent"]["reasoningText"]
        deltas = [{"reasoningContent": {"text": t}} for t in text_cuts(str(reasoning.get("text") or ""), rng)]
        if reasoning.get("signature"):
            deltas.append({"reasoningContent": {"signature": reasoning["signature"]}})
    else:
        return []
    events += [("contentBlockDelta", {**at, "delta": d}) for d in deltas]
    return [*events, ("contentBlockStop", at)]


def _header(name: str, value: str) -> bytes:
    encoded = value.encode()
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(encoded)) + encoded


def _frame(kind: str, payload: JsonObject) -> bytes:
    """One eventstream message: prelude (total and headers lengths, their CRC32), string
    headers, the JSON payload, the message's CRC32."""
    head = (
        _header(":event-type", kind)
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    body = json.dumps(payload, separators=(",", ":")).encode()
    prelude = struct.pack(">II", 12 + len(head) + len(body) + 4, len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + body
    return message + struct.pack(">I", zlib.crc32(message))


REFRAMER = BedrockReframer()
