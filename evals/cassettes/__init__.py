"""Cassettes: reading vcrpy recordings (ours and other tools'), storing, matching, scrubbing,
and binding one cassette to one adapter for replay or recording (`open_episode`)."""

from xpeval.evals.cassettes.binding import (
    CassetteMiss,
    CassetteTransport,
    Episode,
    open_episode,
    record_command,
)
from xpeval.evals.cassettes.format import CassetteError, Interaction, load_cassette, load_interactions
from xpeval.evals.cassettes.meta import CassetteMeta, Mode, Source
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.scrub import PLACEHOLDER, Scrubber

__all__ = [
    "PLACEHOLDER",
    "CassetteError",
    "CassetteMeta",
    "CassetteMiss",
    "CassetteStore",
    "CassetteTransport",
    "Episode",
    "Interaction",
    "Mode",
    "Scrubber",
    "Source",
    "load_cassette",
    "load_interactions",
    "open_episode",
    "record_command",
]
