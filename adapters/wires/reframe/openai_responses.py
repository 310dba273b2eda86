"""OpenAI Responses streams: a recorded event stream read into its `response` object, and a
response streamed again with its deltas cut, interleaved across output items, the `.done`
events kept or left out, and the terminal event with or without its output (a decoder then
rebuilds the reply from the items and deltas)."""

from __future__ import annotations

import copy
from random import Random
from typing import Any

from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.reframe._cuts import interleave, text_cuts
from xpeval.adapters.wires.reframe._sse import frame, json_events

_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


class ResponsesReframer:
    def whole(self, body: bytes) -> JsonObject | None:
        parsed = json_events(body)
        if parsed is None:
            return None
        final: JsonObject | None = None
        done: dict[int, Any] = {}
        for _event, doc in parsed:
            kind = doc.get("type") if isinstance(doc, dict) else None
            if kind == "error":
                return None
            if kind == "response.output_item.done":
                done[doc.get("output_index", len(done))] = doc.get("item")
            elif kind in _TERMINAL:
                final = copy.deepcopy(doc.get("response"))
        if not isinstance(final, dict):
            return None
        if not final.get("output") and done:
            final["output"] = [done[i] for i in sorted(done)]
        return final

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        started = {**whole, "status": "in_progress", "output": [], "usage": None}
        events: list[JsonObject] = [{"type": "response.created", "response": started}]
        output = whole.get("output") or []
        keep_done = rng.random() < 0.7
        sequences = [_item_events(index, item, rng, keep_done) for index, item in enumerate(output)]
        events += interleave(sequences, rng)
        final = dict(whole)
        if output and rng.random() < 0.3:
            final["output"] = []
        kind = {"incomplete": "response.incomplete", "failed": "response.failed"}.get(
            str(whole.get("status")), "response.completed"
        )
        events.append({"type": kind, "response": final})
        return [frame({**e, "sequence_number": n}, e["type"]) for n, e in enumerate(events)]


def _item_events(index: int, item: JsonObject, rng: Random, keep_done: bool) -> list[JsonObject]:
    kind = item.get("type")
    at = {"output_index": index, "item_id": item.get("id")}
    if kind == "function_call":
        opened = {**item, "arguments": "", "status": "in_progress"}
        pieces = text_cuts(item.get("arguments") or "", rng)
        events = [{"type": "response.output_item.added", "output_index": index, "item": opened}]
        events += [{"type": "response.function_call_arguments.delta", **at, "delta": p} for p in pieces]
        if keep_done:
            events.append(
                {"type": "response.function_call_arguments.done", **at, "arguments": item.get("arguments")}
            )
    elif kind == "message":
        opened = {**item, "content": [], "status": "in_progress"}
        events = [{"type": "response.output_item.added", "output_index": index, "item": opened}]
        for part_index, part in enumerate(item.get("content") or []):
            events += _part_events(at, part_index, part, rng)
    else:
        events = [{"type": "response.output_item.added", "output_index": index, "item": item}]
    if keep_done or kind not in ("function_call", "message"):
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def _part_events(at: JsonObject, part_index: int, part: JsonObject, rng: Random) -> list[JsonObject]:
    where = {**at, "content_index": part_index}
    if part.get("type") == "output_text":
        pieces = text_cuts(part.get("text") or "", rng)
        return [{"type": "response.output_text.delta", **where, "delta": p} for p in pieces]
    if part.get("type") == "refusal":
        pieces = text_cuts(part.get("refusal") or "", rng)
        return [{"type": "response.refusal.delta", **where, "delta": p} for p in pieces]
    return []


REFRAMER = ResponsesReframer()
