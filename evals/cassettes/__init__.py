"""Cassettes: reading vcrpy recordings (ours and other tools'), storing, matching, scrubbing,
and binding one cassette to one adapter for replay or recording (`open_episode`)."""

from evals.cassettes.episode import CassetteMiss, CassetteTransport, Episode, open_episode, record_command
from evals.cassettes.format import CassetteError, Interaction, load_cassette, load_interactions
from evals.cassettes.meta import CassetteMeta, Mode, Source
from evals.cassettes.store import CassetteStore
from evals.scrub import PLACEHOLDER, Scrubber

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
