"""Anthropic's Message Batches (the anthropic-messages wire): `{custom_id, params}` requests
posted in one call (`params` is the Messages request body), up to 100,000 requests or 256 MB a
batch, most ended within an hour; results are JSON lines of `{custom_id, result}` whose type is
`succeeded` (the message), `errored`, `canceled` or `expired`, in no particular order
(docs/batch.md). A Message Batch has no metadata: a run killed between creating one and writing
its id down finds it by its request count among the batches created since (`find`), and its
answers' ids are checked to be the run's before any is used.

The emulator's side (`serve`) answers the same endpoints from `EmulatedService`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from xpeval.adapters.wires.batch._base import (
    BatchAnswer,
    BatchLimits,
    BatchRequest,
    BatchState,
    BatchStatus,
    EmulatedBatch,
    EmulatedService,
    HttpAnswer,
)

API_NAME = "anthropic"
_STATES: dict[str, BatchState] = {"in_progress": "pending", "canceling": "pending", "ended": "ended"}
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""An errored result carries the error's type, not a status: the status its online request
would have had (Anthropic's errors page)."""


def _entry(request: BatchRequest) -> dict[str, Any]:
    return {"custom_id": request.custom_id, "params": request.json()}


class AnthropicBatch:
    name = API_NAME
    limits = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)

    def unusable(self, emulated: bool) -> str | None:
        return None  # the adapter's own client and key are all it needs

    def line_path(self, base_url: str, url_path: str) -> str:
        return url_path

    def request_bytes(self, request: BatchRequest) -> int:
        return len(json.dumps(_entry(request), separators=(",", ":"), ensure_ascii=False).encode()) + 1

    async def submit(self, client: Any, requests: Sequence[BatchRequest], tag: str) -> str:
        batch = await client.messages.batches.create(requests=[_entry(r) for r in requests])
        return str(batch.id)

    async def status(self, client: Any, batch_id: str) -> BatchStatus:
        batch = await client.messages.batches.retrieve(batch_id)
        return BatchStatus(
            id=batch_id,
            state=_STATES.get(batch.processing_status, "pending"),
            detail=str(batch.processing_status),
            counts=batch.request_counts.model_dump(),
        )

    async def answers(self, client: Any, batch_id: str) -> list[BatchAnswer]:
        out: list[BatchAnswer] = []
        async for item in await client.messages.batches.results(batch_id):
            out.append(_answer(item.custom_id, item.result.to_dict()))
        return out

    async def find(self, client: Any, tag: str, count: int, since: float) -> list[str]:
        found: list[str] = []
        async for batch in client.messages.batches.list(limit=100):
            if batch.created_at.timestamp() < since:
                break  # listed newest first
            counts = batch.request_counts.model_dump()
            if sum(counts.values()) == count:
                found.append(str(batch.id))
        return found

    # --- the emulator's side -------------------------------------------------------------

    def finish(self, batch: EmulatedBatch, service: EmulatedService) -> None:
        """Nothing to prepare: results are rendered when asked for."""

    def serve(
        self, method: str, path: str, headers: dict[str, str], body: bytes, service: EmulatedService
    ) -> HttpAnswer | None:
        route = re.fullmatch(r"/v1/messages/batches(?:/([^/?]+))?(/results)?(?:\?.*)?", path)
        if route is None:
            return None
        item, results = route.groups()
        if method == "POST" and item is None:
            asked = json.loads(body)
            requests = [
                BatchRequest(str(r["custom_id"]), "/v1/messages", json.dumps(r["params"]).encode())
                for r in asked.get("requests") or []
            ]
            return _json(_render(service.create(API_NAME, requests)))
        if method == "GET" and item is None:
            own = [b for b in service.batches() if b.api == API_NAME]
            listed = [_render(b) for b in sorted(own, key=lambda b: -b.created_at)]
            return _json({"data": listed, "has_more": False})
        found = service.batch(item) if method == "GET" and item else None
        if found is None or found.api != API_NAME:
            error = {"type": "error", "error": {"type": "not_found_error", "message": f"{item} not found"}}
            return HttpAnswer(404, json.dumps(error).encode())
        if results:
            return HttpAnswer(200, _results(found), "application/binary")
        return _json(_render(found))


def _answer(custom_id: str, result: dict[str, Any]) -> BatchAnswer:
    kind = result.get("type")
    if kind == "succeeded":
        return BatchAnswer(custom_id, "succeeded", 200, json.dumps(result.get("message")).encode())
    if kind in ("expired", "canceled"):
        return BatchAnswer(custom_id, "expired" if kind == "expired" else "cancelled", message=str(kind))
    error = result.get("error") or {}
    detail = error.get("error") if isinstance(error, dict) else None
    detail = detail if isinstance(detail, dict) else {}
    error_type = str(detail.get("type") or "api_error")
    return BatchAnswer(
        custom_id,
        "errored",
        ERROR_STATUS.get(error_type, 500),
        json.dumps(error).encode(),
        message=str(detail.get("message") or error),
        error_type=error_type,
    )


def _json(value: dict[str, Any]) -> HttpAnswer:
    return HttpAnswer(200, json.dumps(value).encode())


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _render(batch: EmulatedBatch) -> dict[str, Any]:
    counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    if batch.state == "pending":
        counts["processing"] = len(batch.requests)
    for answer in batch.answers:
        counts[{"cancelled": "canceled"}.get(answer.outcome, answer.outcome)] += 1
    ended = batch.state != "pending"
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": counts,
        "created_at": _iso(batch.created_at),
        "expires_at": _iso(batch.created_at + 86400),
        "ended_at": _iso(time.time()) if ended else None,
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"/v1/messages/batches/{batch.id}/results" if ended else None,
    }


def _results(batch: EmulatedBatch) -> bytes:
    lines = []
    for answer in batch.answers:
        result: dict[str, Any]
        if answer.outcome == "succeeded":
            result = {"type": "succeeded", "message": json.loads(answer.body or b"null")}
        elif answer.outcome in ("expired", "cancelled"):
            result = {"type": "expired" if answer.outcome == "expired" else "canceled"}
        else:
            error = json.loads(answer.body) if answer.body else None
            if not (isinstance(error, dict) and isinstance(error.get("error"), dict)):
                error = {"type": "error", "error": {"type": "api_error", "message": answer.message or ""}}
            result = {"type": "errored", "error": error}
        lines.append(json.dumps({"custom_id": answer.custom_id, "result": result}).encode() + b"\n")
    return b"".join(lines)


API = AnthropicBatch()
