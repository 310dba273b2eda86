"""What a cassette says about itself: where its responses came from, when, and for what request.

The metadata lives in the cassette file under vcrpy's own top-level `metadata:` mapping (vcrpy
9.4 loads and saves it next to `interactions`), in an `xpeval:` entry, so plain vcrpy replays
our cassettes and keeps the metadata when it rewrites them.
"""

from __future__ import annotations

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

    def age_days(self, now: datetime) -> float:
        return (now - self.recorded_at).total_seconds() / 86400.0
