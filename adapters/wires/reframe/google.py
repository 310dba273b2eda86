"""Gemini `streamGenerateContent` streams (SSE): a recorded stream read into the one
`GenerateContentResponse` it spells, and a response streamed again with its text parts cut,
its parts grouped into chunks differently, usage on every chunk or only the last, and the
finish reason with the last parts or in a chunk of its own. Function calls stay whole: Gemini
never streams a call's arguments in pieces."""

from __future__ import annotations

import copy
from random import Random
from typing import Any

from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.reframe._cuts import text_cuts
from xpeval.adapters.wires.reframe._sse import frame, json_events

_ENVELOPE = ("modelVersion", "responseId", "createTime")


class GeminiReframer:
    def whole(self, body: bytes) -> JsonObject | None:
        parsed = json_events(body)
        if parsed is None:
            return None
        parts: list[Any] = []
        last: JsonObject = {}
        candidate: JsonObject = {}
        for _event, doc in parsed:
            if not isinstance(doc, dict) or doc.get("error"):
                return None
            last = {**last, **{k: v for k, v in doc.items() if k != "candidates"}}
            for found in (doc.get("candidates") or [])[:1]:
                parts += (found.get("content") or {}).get("parts") or []
                candidate = {**candidate, **{k: v for k, v in found.items() if k != "content"}}
        if "finishReason" not in candidate:
            return None
        whole = copy.deepcopy(last)
        whole["candidates"] = [{**candidate, "content": {"parts": parts, "role": "model"}}]
        return whole

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        candidate = whole["candidates"][0]
        pieces = [piece for part in candidate["content"]["parts"] for piece in _part_pieces(part, rng)]
        chunks: list[list[Any]] = []
        while pieces:
            size = rng.choice([1, 1, 2, 3])
            chunks.append(pieces[:size])
            pieces = pieces[size:]
        if not chunks or rng.random() < 0.4:
            chunks.append([{"text": ""}])
        envelope = {k: whole[k] for k in _ENVELOPE if k in whole}
        usage_everywhere = rng.random() < 0.5
        ending = {k: v for k, v in candidate.items() if k not in ("content",)}
        frames = []
        for number, parts in enumerate(chunks):
            last = number == len(chunks) - 1
            found: JsonObject = {"content": {"parts": parts, "role": "model"}, "index": 0}
            doc: JsonObject = {"candidates": [{**found, **ending} if last else found], **envelope}
            if "usageMetadata" in whole and (last or usage_everywhere):
                doc["usageMetadata"] = whole["usageMetadata"]
            if last:
                doc.update({k: v for k, v in whole.items() if k not in ("candidates", *_ENVELOPE)})
            frames.append(frame(doc))
        return frames


def _part_pieces(part: Any, rng: Random) -> list[Any]:
    """A text part in pieces (its signature and thought flag on the first); any other part whole."""
    if not isinstance(part, dict) or not isinstance(part.get("text"), str) or not part["text"]:
        return [part]
    rest = {k: v for k, v in part.items() if k not in ("text", "thoughtSignature")}
    pieces = [{**rest, "text": text} for text in text_cuts(part["text"], rng)]
    if "thoughtSignature" in part:
        pieces[0]["thoughtSignature"] = part["thoughtSignature"]
    return pieces


REFRAMER = GeminiReframer()
