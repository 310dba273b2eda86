"""The records a `--batch` run writes beside its rows: every batch accounted for in the file.

A batch's life is three records, each written (and fsynced) before the step that depends on it:

- `batch` (the intent): written before the batch is created. xpeval's id for the batch, the
  Batch API, the adapter and model, and what it holds (each request's custom id, the episode it
  answers and the sha256 of its body). A run killed after this and before the next record
  finds its batch again by that id (OpenAI keeps it in the batch's metadata) or by its request
  count (Anthropic), and never creates it twice.
- `batch_submitted`: the provider's id of the batch, written before the first poll (`adopted`:
  found again after a crash rather than created by this process).
- `batch_settled`: the batch is over and every one of its episodes has its final row; its state
  and how its requests ended (answered, errored, expired, missing from its results).

A multi-turn episode's turns go as successive batches, one request each (its round). Its intent
names each request's round (`rounds`), and each answer of such a batch is kept in the file
(`batch_answer`, before the batch's `batch_settled`): a resumed run replays an episode's earlier
rounds from them to reach its next request (`xpeval.evals.batch.rounds`). There, settled means
every episode of the batch has its final row or its answer kept.

Older files have none of these and read as before; the readers skip them where they read rows
(`xpeval.evals.results.load`), and the chain of custody checks they are of the file's run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BATCH_RECORD_TYPES = ("batch", "batch_submitted", "batch_settled", "batch_answer")

MAX_KEPT_ANSWER_BYTES = 900 * 1024
"""Most bytes of a kept answer's body: its line stays within a row's bound (`MAX_ROW_BYTES`,
which the column reader's blocks are sized for)."""


class BatchIntent(BaseModel):
    """A batch about to be created: what it holds."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["batch"] = "batch"
    run: str
    batch: str
    """xpeval's id of the batch (what the provider keeps for it where it can)."""
    api: str
    adapter: str
    model: str
    created_after: float
    """Epoch seconds just before the create call: a batch found again was created after it."""
    episodes: list[str]
    custom_ids: list[str]
    digests: list[str]
    """sha256 of each request's body: the request answered later must be the one sent."""
    at: str
    rounds: list[int] | None = None
    """A batch of multi-turn episodes' turns: each request's round (1: the episode's first
    request); None for single-turn episodes' batches."""

    @model_validator(mode="after")
    def _aligned(self) -> BatchIntent:
        if not (len(self.episodes) == len(self.custom_ids) == len(self.digests)) or not self.episodes:
            raise ValueError("a batch record names each of its requests' episode, custom id and digest")
        if self.rounds is not None and (
            len(self.rounds) != len(self.episodes) or any(r < 1 for r in self.rounds)
        ):
            raise ValueError("a batch record names each of its requests' round, from 1")
        if len(set(self.custom_ids)) != len(self.custom_ids):
            raise ValueError("a batch record names a custom id twice")
        return self


class BatchSubmitted(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["batch_submitted"] = "batch_submitted"
    run: str
    batch: str
    provider_id: str
    adopted: bool = False
    """Found again among the provider's batches after a crash, not created by this process."""
    at: str


class BatchSettled(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["batch_settled"] = "batch_settled"
    run: str
    batch: str
    state: str
    detail: str
    counts: dict[str, int] = Field(default_factory=dict)
    """How its requests ended: `succeeded`, `errored`, `expired`, `cancelled`, `missing`."""
    at: str


class BatchAnswerKept(BaseModel):
    """One answer of a batch of multi-turn episodes' turns, kept for the rounds after it: the
    HTTP status and body the request got (a resumed run answers the replayed request with them,
    only if the request's digest is its intent's)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["batch_answer"] = "batch_answer"
    run: str
    batch: str
    custom_id: str
    outcome: Literal["succeeded", "errored"]
    status: int = Field(ge=100, le=599)
    body: str = Field(max_length=MAX_KEPT_ANSWER_BYTES)
    error_type: str | None = None
    at: str


BatchRecord = BatchIntent | BatchSubmitted | BatchSettled | BatchAnswerKept
