"""Gemini's batch mode (the google-genai wire, Gemini Developer API): inline requests of
`{request, metadata}` posted to `models/{model}:batchGenerateContent` through the SDK's
`batches.create(src=[InlinedRequest, ...])`, each `request` the generateContent body; answers in
the batch's `inlinedResponses`, each with the metadata it was sent with (xpeval's custom id under
`key`). Inline input must stay under 20 MB; a larger run is split into several inline batches
(the JSONL-file input Gemini also takes is not used). The batch's display name is xpeval's id of
it, so a run killed between creating it and writing its id down finds it again (`find`).

The SDK builds each inline request from its own types; `_inlined` reads the captured body into
them (generation config, tools, tool config and system instruction are one config there), and
the SDK writes the same body back (docs/batch.md).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from xpeval.adapters.wires.batch._base import (
    AnswerOutcome,
    BatchAnswer,
    BatchLimits,
    BatchRequest,
    BatchState,
    BatchStatus,
    EmulatedBatch,
    EmulatedService,
    HttpAnswer,
)

API_NAME = "gemini"
KEY = "key"
"""The metadata entry holding a request's custom id."""
_CONFIG_KEYS = ("tools", "toolConfig", "systemInstruction", "safetySettings", "cachedContent")
_STATES: dict[str, BatchState] = {
    "JOB_STATE_SUCCEEDED": "ended",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "ended",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}
_RPC_STATUS = {3: 400, 5: 404, 7: 403, 8: 429, 13: 500, 14: 503, 4: 504}
"""An inline answer's error carries a google.rpc code: the HTTP status its online request would
have had (google.rpc's code table)."""


def _model_of(path: str) -> str:
    found = re.search(r"models/([^/:?]+)", path)
    if found is None:
        raise ValueError(f"{path}: no model in a Gemini request path")
    return found.group(1)


def _inlined(request: BatchRequest) -> Any:
    from google.genai import types

    body = request.json()
    config = {**body.get("generationConfig", {}), **{k: body[k] for k in _CONFIG_KEYS if k in body}}
    return types.InlinedRequest(
        contents=body["contents"],
        config=types.GenerateContentConfig.model_validate(config),
        metadata={KEY: request.custom_id},
    )


def _state(job_state: object) -> tuple[BatchState, str]:
    name = str(getattr(job_state, "value", job_state))
    return _STATES.get(name, "pending"), name


class GeminiBatch:
    name = API_NAME
    limits = BatchLimits(max_requests=100_000, max_bytes=19 * 1024 * 1024)

    def unusable(self, emulated: bool) -> str | None:
        return None  # the adapter's own client and key are all it needs

    def line_path(self, base_url: str, url_path: str) -> str:
        return url_path

    def request_bytes(self, request: BatchRequest) -> int:
        entry = {"request": request.json(), "metadata": {KEY: request.custom_id}}
        return len(json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode())

    async def submit(self, client: Any, requests: Sequence[BatchRequest], tag: str) -> str:
        models = {_model_of(r.path) for r in requests}
        if len(models) != 1:
            raise ValueError(f"one batch holds one model's requests, not {sorted(models)}")
        batch = await client.batches.create(
            model=models.pop(), src=[_inlined(r) for r in requests], config={"display_name": tag}
        )
        return str(batch.name)

    async def status(self, client: Any, batch_id: str) -> BatchStatus:
        batch = await client.batches.get(name=batch_id)
        state, detail = _state(batch.state)
        return BatchStatus(id=batch_id, state=state, detail=detail)

    async def answers(self, client: Any, batch_id: str) -> list[BatchAnswer]:
        batch = await client.batches.get(name=batch_id)
        inlined = batch.dest.inlined_responses if batch.dest is not None else None
        return [_answer(item) for item in inlined or []]

    async def find(self, client: Any, tag: str, count: int, since: float) -> list[str]:
        found: list[str] = []
        async for batch in await client.batches.list(config={"page_size": 100}):
            created = batch.create_time.timestamp() if batch.create_time is not None else since
            if batch.display_name == tag and created >= since:
                found.append(str(batch.name))
        return found

    # --- the emulator's side -------------------------------------------------------------

    def finish(self, batch: EmulatedBatch, service: EmulatedService) -> None:
        """Nothing to prepare: the answers are inline in the batch."""

    def serve(
        self, method: str, path: str, headers: dict[str, str], body: bytes, service: EmulatedService
    ) -> HttpAnswer | None:
        create = re.fullmatch(r"/(v1\w*)/models/([^/:?]+):batchGenerateContent(?:\?.*)?", path)
        if create is not None and method == "POST":
            version, model = create.groups()
            asked = json.loads(body).get("batch") or {}
            lines = ((asked.get("inputConfig") or {}).get("requests") or {}).get("requests") or []
            requests = [
                BatchRequest(
                    str((line.get("metadata") or {}).get(KEY)),
                    f"/{version}/models/{model}:generateContent",
                    json.dumps(line.get("request") or {}).encode(),
                )
                for line in lines
            ]
            made = service.create(API_NAME, requests, tag=asked.get("displayName"), endpoint=model)
            return _json(_render(made))
        route = re.fullmatch(r"/v1\w*/batches(?:/([^/?:]+))?(?:\?.*)?", path)
        if route is None or method != "GET":
            return None
        (item,) = route.groups()
        if item is None:
            own = [b for b in service.batches() if b.api == API_NAME]
            return _json({"operations": [_render(b) for b in sorted(own, key=lambda b: -b.created_at)]})
        found = service.batch(item)
        if found is None or found.api != API_NAME:
            error = {"error": {"code": 404, "message": f"batches/{item} not found", "status": "NOT_FOUND"}}
            return HttpAnswer(404, json.dumps(error).encode())
        return _json(_render(found))


_UNANSWERED: dict[int, AnswerOutcome] = {4: "expired", 1: "cancelled"}


def _answer(item: Any) -> BatchAnswer:
    custom_id = str((item.metadata or {}).get(KEY))
    if item.response is not None:
        body = item.response.model_dump(mode="json", by_alias=True, exclude_none=True)
        return BatchAnswer(custom_id, "succeeded", 200, json.dumps(body).encode())
    error = item.error
    code = int(getattr(error, "code", None) or 13)
    if code in _UNANSWERED:  # google.rpc's DEADLINE_EXCEEDED and CANCELLED: no answer was made
        return BatchAnswer(custom_id, _UNANSWERED[code], message=str(getattr(error, "message", "")))
    status = code if code >= 400 else _RPC_STATUS.get(code, 500)
    message = str(getattr(error, "message", None) or "errored")
    body = {"error": {"code": status, "message": message, "status": "INTERNAL"}}
    return BatchAnswer(custom_id, "errored", status, json.dumps(body).encode(), message, str(code))


def _json(value: dict[str, Any]) -> HttpAnswer:
    return HttpAnswer(200, json.dumps(value).encode())


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


_RENDERED_STATE = {
    "pending": "BATCH_STATE_RUNNING",
    "ended": "BATCH_STATE_SUCCEEDED",
    "failed": "BATCH_STATE_FAILED",
    "cancelled": "BATCH_STATE_CANCELLED",
    "expired": "BATCH_STATE_EXPIRED",
}


def _render(batch: EmulatedBatch) -> dict[str, Any]:
    name = f"batches/{batch.id}"
    metadata: dict[str, Any] = {
        "name": name,
        "model": f"models/{batch.endpoint}",
        "displayName": batch.tag,
        "state": _RENDERED_STATE[batch.state],
        "createTime": _iso(batch.created_at),
        "updateTime": _iso(time.time()),
    }
    if batch.state != "pending":
        metadata["output"] = {
            "inlinedResponses": {"inlinedResponses": [_rendered_answer(a) for a in batch.answers]}
        }
    return {"name": name, "metadata": metadata, "done": batch.state != "pending"}


def _rendered_answer(answer: BatchAnswer) -> dict[str, Any]:
    meta = {KEY: answer.custom_id}
    if answer.outcome == "succeeded" and answer.body is not None:
        return {"response": json.loads(answer.body), "metadata": meta}
    code = {"expired": 4, "cancelled": 1}.get(answer.outcome, 13)
    return {"error": {"code": code, "message": answer.message or answer.outcome}, "metadata": meta}


API = GeminiBatch()
