"""What a cassette says about itself: where its responses came from, when, and for what request.

The metadata lives in the cassette file under vcrpy's own top-level `metadata:` mapping (vcrpy
9.4 loads and saves it next to `interactions`), in an `xpeval:` entry, so plain vcrpy replays
our cassettes and keeps the metadata when it rewrites them.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict

META_KEY = "xpeval"
"""The entry of vcrpy's `metadata:` mapping that holds a `CassetteMeta`."""


class Mode(StrEnum):
    """How an episode talks to its provider (the same for the CLI and for pytest).

    `replay`: cassettes only, the network blocked; `record`: new and changed episodes are
    recorded (unchanged ones replay and stay as they are); `live`: no cassette at all.
    """

    REPLAY = "replay"
    RECORD = "record"
    LIVE = "live"


Source = Literal["live", "local-model", "emulated"]
"""Where recorded responses came from: a real provider, the local model server, or the emulator."""

TargetKind = Literal["provider", "local-model", "emulator"]
"""Where an episode's requests go (`xpeval run --target`)."""

TARGET_OF_SOURCE: dict[Source, TargetKind] = {
    "live": "provider",
    "local-model": "local-model",
    "emulated": "emulator",
}
"""The target that records a cassette of each source (and that replays it as it was recorded)."""


Delivery = Literal["online", "batch"]


class CassetteMeta(BaseModel):
    """The provenance of one recorded episode."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    source: Source
    model: str
    recorded_at: AwareDatetime
    adapter: str
    case: str
    xpeval_version: str
    fingerprint: str
    """sha256 of the canonical requests the episode sent, in order (see `matching.requests_fingerprint`)."""
    text_calls: bool = False
    """The replies were read with the local target's parser of calls written as text
    (docs/local-model.md, "Calls written as text"); replay reads them the same way. False for
    every recording made before that parser, whose later turns followed the text unparsed."""

    case_digest: str | None = None
    """An emulated recording: sha256 of the case it was rendered from (`case_digest`), so a
    case edited since (its expected answer, say) is told apart from a pipeline bug. None for
    other sources, whose answers are the model's, and for recordings made before the field."""

    delivery: Delivery = "online"
    """How the responses were asked for: one request at a time, or through the provider's Batch
    API (`xpeval run --batch`: a whole reply, never streamed, at the batch price; docs/batch.md).
    A batch recording replays like an online one."""

    def age_days(self, now: datetime) -> float:
        return (now - self.recorded_at).total_seconds() / 86400.0


def case_digest(case: BaseModel) -> str:
    """sha256 of a case's canonical JSON: what an emulated answer was rendered from."""
    text = json.dumps(case.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
