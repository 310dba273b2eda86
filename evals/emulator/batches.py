"""The emulator's Batch APIs: uploaded files, batches, and their results, on the same loopback
server as the online endpoints (each API's paths and bodies come from its module in
`xpeval.adapters.wires.batch`; this keeps the state and the faults).

A batch stays pending for `polls_before_end` polls, then ends: each request is answered as the
online endpoint would answer it (the reply of the script named by its `custom_id`, rendered by
the wire of its path, never streamed), in a shuffled order. The faults a test asks for are per
request: `fault(request)` may answer `expired`, `errored` (a 500 error body) or `missing` (left
out of the results: a partial batch); `hold(batch)` keeps a batch pending however often it is
polled (a test's provider still running it). `creates` counts every batch created, and `submitted`
every custom id submitted, so a test can show nothing was submitted twice.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from xpeval.adapters.wires.batch import (
    BatchAnswer,
    BatchRequest,
    EmulatedBatch,
    HttpAnswer,
    batch_api,
    batch_apis,
)

Fault = Literal["expired", "errored", "missing"]
Responder = Callable[[BatchRequest], tuple[int, bytes]]
"""The online answer to one batch request: its status and JSON body."""


@dataclass
class BatchKnobs:
    """What the emulator's Batch APIs do: how long batches run, in which order they answer, and
    the faults injected per request."""

    polls_before_end: int = 1
    shuffle_seed: int | None = 7
    """Results in a shuffled order (None: in request order)."""
    fault: Callable[[BatchRequest], Fault | None] = field(default=lambda request: None)
    hold: Callable[[EmulatedBatch], bool] = field(default=lambda batch: False)
    """A batch kept pending however often it is polled (a provider still running it)."""


class BatchService:
    """Files and batches of every emulated Batch API (thread-safe: the server is threaded)."""

    def __init__(self, responder: Responder, knobs: BatchKnobs | None = None) -> None:
        self.knobs = knobs or BatchKnobs()
        self._respond = responder
        self._lock = threading.RLock()
        self._files: dict[str, bytes] = {}
        self._objects: dict[str, bytes] = {}
        self._batches: dict[str, EmulatedBatch] = {}
        self._polls: Counter[str] = Counter()
        self._ids = itertools.count(1)
        self.creates = 0
        self.submitted: Counter[str] = Counter()

    def serve(self, method: str, path: str, headers: dict[str, str], body: bytes) -> HttpAnswer | None:
        for api in batch_apis():  # every registered wire's, a plugin's too
            answer = api.serve(method, path, headers, body, self)
            if answer is not None:
                return answer
        return None

    # --- EmulatedService ------------------------------------------------------------------

    def put_file(self, content: bytes) -> str:
        with self._lock:
            file_id = f"file-emu{next(self._ids)}"
            self._files[file_id] = content
            return file_id

    def file(self, file_id: str) -> bytes | None:
        with self._lock:
            return self._files.get(file_id)

    def put_object(self, uri: str, content: bytes) -> None:
        with self._lock:
            self._objects[uri] = content

    def objects(self, prefix: str) -> dict[str, bytes]:
        with self._lock:
            return {uri: data for uri, data in self._objects.items() if uri.startswith(prefix)}

    def create(
        self,
        api: str,
        requests: list[BatchRequest],
        *,
        tag: str | None = None,
        endpoint: str = "",
        input_file_id: str | None = None,
        output_uri: str | None = None,
    ) -> EmulatedBatch:
        with self._lock:
            self.creates += 1
            self.submitted.update(r.custom_id for r in requests)
            batch = EmulatedBatch(
                id=f"batch_emu{next(self._ids)}",
                api=api,
                requests=list(requests),
                created_at=int(time.time()),
                tag=tag,
                endpoint=endpoint,
                input_file_id=input_file_id,
                output_uri=output_uri,
            )
            self._batches[batch.id] = batch
            return batch

    def batch(self, batch_id: str) -> EmulatedBatch | None:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None or batch.state != "pending":
                return batch
            self._polls[batch_id] += 1
            if self._polls[batch_id] > self.knobs.polls_before_end and not self.knobs.hold(batch):
                self._end(batch)
            return batch

    def batches(self) -> list[EmulatedBatch]:
        with self._lock:
            return list(self._batches.values())

    def _end(self, batch: EmulatedBatch) -> None:
        answers = [a for a in (self._answer(batch.api, r) for r in batch.requests) if a is not None]
        if self.knobs.shuffle_seed is not None:
            random.Random(self.knobs.shuffle_seed).shuffle(answers)
        batch.answers = answers
        batch.state = "ended"
        batch_api(batch.api).finish(batch, self)

    def _answer(self, api: str, request: BatchRequest) -> BatchAnswer | None:
        fault = self.knobs.fault(request)
        if fault == "missing":
            return None
        if fault == "expired":
            return BatchAnswer(request.custom_id, "expired", message="the batch's window expired")
        if fault == "errored":
            error: dict[str, object] = {
                "message": "emulated server error",
                "type": "server_error",
                "code": 500,
            }
            if api == "anthropic":
                error = {"type": "error", "error": {"type": "api_error", "message": "emulated server error"}}
            else:
                error = {"error": error}
            return BatchAnswer(
                request.custom_id, "errored", 500, json.dumps(error).encode(), "emulated server error"
            )
        status, body = self._respond(request)
        if status != 200:
            return BatchAnswer(request.custom_id, "errored", status, body, body.decode("utf-8", "replace"))
        return BatchAnswer(request.custom_id, "succeeded", 200, body)
