"""OpenAI's Batch API (for the openai-chat and openai-responses wires): a JSONL file of
`{custom_id, method, url, body}` lines uploaded with `purpose="batch"`, a batch on one endpoint
(`/v1/chat/completions` or `/v1/responses`) with a 24 h window, results in an output file and an
error file, in no particular order. Limits: 50,000 requests and 200 MB per input file
(docs/batch.md). A batch carries `metadata`, where xpeval keeps its own id for the batch, so a
run killed between creating it and writing its id down finds it again (`find`).

The emulator's side (`serve`) answers the same endpoints from `EmulatedService`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from email.parser import BytesParser
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

TAG_KEY = "xpeval_batch"
"""The metadata key holding xpeval's id of a batch."""
API_PREFIX = "/v1/"
"""Batch lines name their endpoint under the API's version prefix, whatever the base URL."""

_STATES: dict[str, BatchState] = {
    "validating": "pending",
    "in_progress": "pending",
    "finalizing": "pending",
    "cancelling": "pending",
    "completed": "ended",
    "expired": "expired",
    "failed": "failed",
    "cancelled": "cancelled",
}
_EXPIRED_CODE = "batch_expired"
_CANCELLED_CODE = "batch_cancelled"


def _line(request: BatchRequest) -> bytes:
    line = {"custom_id": request.custom_id, "method": "POST", "url": request.path, "body": request.json()}
    return (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


API_NAME = "openai"
GOOGLE_KEY_HEADER = "x-goog-api-key"


class OpenAIBatch:
    name = API_NAME
    limits = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)

    def unusable(self, emulated: bool) -> str | None:
        return None  # the adapter's own client and key are all it needs

    def line_path(self, base_url: str, url_path: str) -> str:
        """The endpoint a request sent to `url_path` names in a batch line: its path below the
        client's base URL, under `/v1/` (a proxy's prefix is not the API's)."""
        base = re.sub(r"^https?://[^/]+", "", base_url).rstrip("/")
        tail = url_path[len(base) :] if base and url_path.startswith(base) else url_path
        return API_PREFIX + tail.lstrip("/").removeprefix(API_PREFIX.strip("/") + "/")

    def request_bytes(self, request: BatchRequest) -> int:
        return len(_line(request))

    async def submit(self, client: Any, requests: Sequence[BatchRequest], tag: str) -> str:
        endpoints = {r.path for r in requests}
        if len(endpoints) != 1:
            raise ValueError(f"one batch holds one endpoint's requests, not {sorted(endpoints)}")
        content = b"".join(_line(r) for r in requests)
        uploaded = await client.files.create(
            file=(f"{tag}.jsonl", content, "application/jsonl"), purpose="batch"
        )
        batch = await client.batches.create(
            input_file_id=uploaded.id,
            endpoint=endpoints.pop(),
            completion_window="24h",
            metadata={TAG_KEY: tag},
        )
        return str(batch.id)

    async def status(self, client: Any, batch_id: str) -> BatchStatus:
        batch = await client.batches.retrieve(batch_id)
        counts = batch.request_counts.model_dump() if batch.request_counts is not None else {}
        return BatchStatus(
            id=batch_id, state=_STATES.get(batch.status, "pending"), detail=str(batch.status), counts=counts
        )

    async def answers(self, client: Any, batch_id: str) -> list[BatchAnswer]:
        batch = await client.batches.retrieve(batch_id)
        out: list[BatchAnswer] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await client.files.content(file_id)
            for line in content.content.splitlines():
                if line.strip():
                    out.append(_answer(json.loads(line)))
        return out

    async def find(self, client: Any, tag: str, count: int, since: float) -> list[str]:
        found: list[str] = []
        async for batch in client.batches.list(limit=100):
            if batch.created_at < since:
                break  # listed newest first
            if (batch.metadata or {}).get(TAG_KEY) == tag:
                found.append(str(batch.id))
        return found

    # --- the emulator's side -------------------------------------------------------------

    def finish(self, batch: EmulatedBatch, service: EmulatedService) -> None:
        finish(batch, service)

    def serve(
        self, method: str, path: str, headers: dict[str, str], body: bytes, service: EmulatedService
    ) -> HttpAnswer | None:
        """The emulator's answer to a request of this API, or None when it is not one."""
        route = re.fullmatch(r"(?:/[^?]*)?/v1/(files|batches)(?:/([^/?]+))?(/content)?(?:\?.*)?", path)
        if route is None or GOOGLE_KEY_HEADER in headers:
            return None  # Gemini's batches share the path; its SDK sends its key in its own header
        kind, item, content = route.groups()
        if kind == "files":
            return _serve_file(method, item, content, headers, body, service)
        if method == "POST" and item is None:
            return _create(body, service)
        if method == "GET" and item is None:
            own = [b for b in service.batches() if b.api == API_NAME]
            listed = [_render(b) for b in sorted(own, key=lambda b: -b.created_at)]
            page = {"object": "list", "data": listed, "has_more": False}
            return HttpAnswer(200, json.dumps(page).encode())
        if method == "GET" and not content:
            found = service.batch(item)
            if found is None or found.api != API_NAME:
                return _missing(item)
            return HttpAnswer(200, json.dumps(_render(found)).encode())
        return None


def _serve_file(
    method: str,
    item: str | None,
    content: str | None,
    headers: dict[str, str],
    body: bytes,
    service: EmulatedService,
) -> HttpAnswer | None:
    if method == "POST" and item is None:
        return _upload(headers, body, service)
    if method == "GET" and item and content:
        data = service.file(item)
        return HttpAnswer(200, data, "application/jsonl") if data is not None else _missing(item)
    return None


def _answer(line: dict[str, Any]) -> BatchAnswer:
    custom_id = str(line.get("custom_id"))
    response = line.get("response") or None
    error = line.get("error") or None
    if isinstance(response, dict) and response.get("status_code") == 200:
        return BatchAnswer(custom_id, "succeeded", 200, json.dumps(response.get("body")).encode())
    if isinstance(error, dict) and error.get("code") in (_EXPIRED_CODE, _CANCELLED_CODE):
        outcome: AnswerOutcome = "expired" if error.get("code") == _EXPIRED_CODE else "cancelled"
        return BatchAnswer(
            custom_id, outcome, message=str(error.get("message")), error_type=str(error["code"])
        )
    if isinstance(response, dict):
        body = response.get("body")
        detail = body.get("error") if isinstance(body, dict) else None
        detail = detail if isinstance(detail, dict) else {}
        return BatchAnswer(
            custom_id,
            "errored",
            int(response.get("status_code") or 0) or None,
            json.dumps(body).encode(),
            message=str(detail.get("message") or body),
            error_type=str(detail.get("type") or detail.get("code") or "") or None,
        )
    detail = error if isinstance(error, dict) else {}
    return BatchAnswer(
        custom_id, "errored", message=str(detail.get("message") or line), error_type=detail.get("code")
    )


def _missing(item: str) -> HttpAnswer:
    body = {"error": {"message": f"No such object: {item}", "type": "invalid_request_error"}}
    return HttpAnswer(404, json.dumps(body).encode())


def _upload(headers: dict[str, str], body: bytes, service: EmulatedService) -> HttpAnswer:
    head = f"content-type: {headers.get('content-type', '')}\r\n\r\n".encode()
    message = BytesParser().parsebytes(head + body)
    content = b""
    for part in message.walk():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            content = payload if isinstance(payload, bytes) else b""
    file_id = service.put_file(content)
    stored = {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": "batch.jsonl",
        "purpose": "batch",
        "status": "processed",
    }
    return HttpAnswer(200, json.dumps(stored).encode())


def _create(body: bytes, service: EmulatedService) -> HttpAnswer:
    asked = json.loads(body)
    input_id = str(asked.get("input_file_id"))
    content = service.file(input_id)
    if content is None:
        return _missing(input_id)
    requests = []
    for raw in content.splitlines():
        if raw.strip():
            line = json.loads(raw)
            requests.append(
                BatchRequest(str(line["custom_id"]), str(line["url"]), json.dumps(line["body"]).encode())
            )
    tag = (asked.get("metadata") or {}).get(TAG_KEY)
    batch = service.create(
        API_NAME, requests, tag=tag, endpoint=str(asked.get("endpoint")), input_file_id=input_id
    )
    return HttpAnswer(200, json.dumps(_render(batch)).encode())


def _render(batch: EmulatedBatch) -> dict[str, Any]:
    status = {
        "pending": "in_progress",
        "ended": "completed",
        "expired": "expired",
        "failed": "failed",
        "cancelled": "cancelled",
    }[batch.state]
    failed = sum(1 for a in batch.answers if a.outcome != "succeeded")
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": batch.endpoint,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": status,
        "created_at": batch.created_at,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "metadata": {TAG_KEY: batch.tag} if batch.tag else None,
        "request_counts": {
            "total": len(batch.requests),
            "completed": len(batch.answers) - failed,
            "failed": failed,
        },
    }


def finish(batch: EmulatedBatch, service: EmulatedService) -> None:
    """An ended batch's output and error files, its answers as OpenAI writes them."""
    output, errors = _result_files(batch)
    batch.output_file_id = service.put_file(output) if output else None
    batch.error_file_id = service.put_file(errors) if errors else None


def _result_files(batch: EmulatedBatch) -> tuple[bytes, bytes]:
    output: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for index, answer in enumerate(batch.answers):
        line: dict[str, Any] = {"id": f"batch_req_{index}", "custom_id": answer.custom_id}
        if answer.outcome in ("expired", "cancelled"):
            code = _EXPIRED_CODE if answer.outcome == "expired" else _CANCELLED_CODE
            line |= {"response": None, "error": {"code": code, "message": answer.message or code}}
            errors.append(line)
            continue
        body = json.loads(answer.body) if answer.body else None
        line |= {
            "response": {"status_code": answer.status or 500, "request_id": f"req_{index}", "body": body},
            "error": None,
        }
        (output if answer.outcome == "succeeded" else errors).append(line)
    return _jsonl(output), _jsonl(errors)


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


API = OpenAIBatch()
