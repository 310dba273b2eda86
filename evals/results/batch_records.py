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

Older files have none of these and read as before; the readers skip them where they read rows
(`xpeval.evals.results.load`), and the chain of custody checks they are of the file's run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BATCH_RECORD_TYPES = ("batch", "batch_submitted", "batch_settled")


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

    @model_validator(mode="after")
    def _aligned(self) -> BatchIntent:
        if not (len(self.episodes) == len(self.custom_ids) == len(self.digests)) or not self.episodes:
            raise ValueError("a batch record names each of its requests' episode, custom id and digest")
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


BatchRecord = BatchIntent | BatchSubmitted | BatchSettled
