"""What every provider's Batch API is, in xpeval's terms: requests in, answers out, by id.

A batch request is an online request as its SDK would send it (its path and JSON body, built by
the wire's own encoder through the SDK) with a `custom_id`; a batch answer is what came back for
one id: the online reply's body and status, or why there is none (errored, expired, cancelled).
Each provider's module (`openai.py`, `anthropic.py`, a plugin wire's own, such as
`xpeval/bundled/bedrock_batch.py`) knows its envelope, its limits, its SDK's batch client and the
emulator's side of the same endpoints; nothing else does (RULES.md). A wire names its Batch API
in its `WirePlugin` (`batch_api`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

BatchState = Literal["pending", "ended", "expired", "failed", "cancelled"]
"""Where a batch is: still running, or over (every request answered, the window passed, the
batch refused as a whole, or cancelled). Over with `expired` or `cancelled`, some requests may
still have answers (the provider keeps what it finished)."""

AnswerOutcome = Literal["succeeded", "errored", "expired", "cancelled"]


@dataclass(frozen=True)
class BatchRequest:
    """One line of a batch: the online request's path and body, and the id it is matched by."""

    custom_id: str
    path: str
    """The online request's path, e.g. the wire's endpoint under the API's version prefix."""
    body: bytes
    """The online request's JSON body, exactly as the SDK encoded it."""

    def json(self) -> dict[str, Any]:
        import json

        value = json.loads(self.body)
        if not isinstance(value, dict):
            raise ValueError("a batch request body is a JSON object")
        return value


@dataclass(frozen=True)
class BatchAnswer:
    """What a batch returned for one `custom_id`."""

    custom_id: str
    outcome: AnswerOutcome
    status: int | None = None
    """The HTTP status the online request would have had (200 when it succeeded)."""
    body: bytes | None = None
    """The online reply's JSON body (succeeded), or the provider's error body (errored)."""
    message: str | None = None
    """Why there is no reply, in the provider's words."""
    error_type: str | None = None


@dataclass(frozen=True)
class BatchStatus:
    id: str
    state: BatchState
    detail: str
    """The provider's own word for the state (`in_progress`, `ended`, `JOB_STATE_RUNNING`, ...)."""
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchLimits:
    max_requests: int
    max_bytes: int
    min_requests: int = 1
    """Fewer requests than this cannot be a batch (any model's)."""
    min_requests_by_model: Mapping[str, int] = field(default_factory=dict)
    """A model's own minimum, where the API has one per model (Bedrock's), by model id."""
    tools: bool = True
    """Whether a batched request may offer tools. Bedrock's `Converse` jobs refuse every record
    that does (docs/batch.md, "Bedrock"), so a live run does not batch those: each would fail."""

    def minimum(self, model: str) -> int:
        """The fewest requests a batch of `model` may hold."""
        return max(self.min_requests, self.min_requests_by_model.get(model, 1))


class BatchApi(Protocol):
    """One provider's Batch API through its official SDK client (the adapter's own client)."""

    name: str
    limits: BatchLimits

    def unusable(self, emulated: bool) -> str | None:
        """Why a run cannot ask this API (a setting it needs is missing), in one line, or None;
        `emulated`: the run asks the emulator, which needs none."""
        ...

    def line_path(self, base_url: str, url_path: str) -> str:
        """The path a batch line names for a request the SDK sent to `url_path`."""
        ...

    def request_bytes(self, request: BatchRequest) -> int:
        """What the request takes in the batch's input (its limits are in bytes of that)."""
        ...

    async def submit(self, client: Any, requests: Sequence[BatchRequest], tag: str) -> str:
        """Create the batch (uploading its input where the API wants a file); its provider id.
        `tag` goes where the provider keeps it (metadata) so a crashed run finds it again."""
        ...

    async def status(self, client: Any, batch_id: str) -> BatchStatus: ...

    async def answers(self, client: Any, batch_id: str) -> list[BatchAnswer]:
        """Every answer the batch has, in the provider's order (which is not the requests')."""
        ...

    async def find(self, client: Any, tag: str, count: int, since: float) -> list[str]:
        """Batches that may be the one created for `tag` (a run killed between creating it and
        writing its id down): the provider's ids, created at or after `since` (epoch seconds)."""
        ...

    def finish(self, batch: EmulatedBatch, service: EmulatedService) -> None:
        """The emulator's side: what an ended batch leaves for its results to be fetched."""
        ...

    def serve(
        self, method: str, path: str, headers: dict[str, str], body: bytes, service: EmulatedService
    ) -> HttpAnswer | None:
        """The emulator's side: the answer to a request of this API, or None when it is not one."""
        ...


@dataclass
class EmulatedBatch:
    """A batch as the emulator keeps it (provider-neutral; each API renders it its own way)."""

    id: str
    api: str
    """The name of the API that created it (`BatchApi.name`)."""
    requests: list[BatchRequest]
    created_at: int
    tag: str | None = None
    endpoint: str = ""
    input_file_id: str | None = None
    state: BatchState = "pending"
    answers: list[BatchAnswer] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    output_uri: str | None = None
    """Where the API writes the batch's results, where the caller names it (Bedrock: an S3 prefix)."""


class EmulatedService(Protocol):
    """The emulator's batch store as an API module's endpoints use it."""

    def put_file(self, content: bytes) -> str: ...

    def file(self, file_id: str) -> bytes | None: ...

    def put_object(self, uri: str, content: bytes) -> None:
        """Keep `content` under a name the caller chose (an S3 object's `s3://bucket/key`)."""
        ...

    def objects(self, prefix: str) -> dict[str, bytes]:
        """The objects whose names start with `prefix`, by name."""
        ...

    def create(
        self,
        api: str,
        requests: list[BatchRequest],
        *,
        tag: str | None = None,
        endpoint: str = "",
        input_file_id: str | None = None,
        output_uri: str | None = None,
    ) -> EmulatedBatch: ...

    def batch(self, batch_id: str) -> EmulatedBatch | None:
        """The batch, moved on by one poll (the emulator ends a batch after some polls)."""
        ...

    def batches(self) -> list[EmulatedBatch]: ...


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes
    content_type: str = "application/json"
