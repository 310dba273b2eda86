"""Cassettes: reading vcrpy recordings (ours and other tools'), storing, matching, scrubbing,
and binding one cassette to one adapter for replay or recording (`bind_cassette`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "PLACEHOLDER": "xpeval.evals.scrub",
    "CassetteError": "xpeval.errors",
    "CassetteMeta": "xpeval.evals.cassettes.meta",
    "CassetteMiss": "xpeval.evals.cassettes.binding",
    "CassetteStore": "xpeval.evals.cassettes.store",
    "CassetteTransport": "xpeval.evals.cassettes.binding",
    "BoundCassette": "xpeval.evals.cassettes.binding",
    "Interaction": "xpeval.evals.cassettes.format",
    "Mode": "xpeval.evals.cassettes.meta",
    "Scrubber": "xpeval.evals.scrub",
    "Source": "xpeval.evals.cassettes.meta",
    "load_cassette": "xpeval.evals.cassettes.format",
    "load_interactions": "xpeval.evals.cassettes.format",
    "bind_cassette": "xpeval.evals.cassettes.binding",
    "record_command": "xpeval.evals.cassettes.binding",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from xpeval.errors import (
        CassetteError as CassetteError,
    )  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.cassettes.binding import BoundCassette as BoundCassette
    from xpeval.evals.cassettes.binding import CassetteMiss as CassetteMiss
    from xpeval.evals.cassettes.binding import CassetteTransport as CassetteTransport
    from xpeval.evals.cassettes.binding import bind_cassette as bind_cassette
    from xpeval.evals.cassettes.binding import record_command as record_command
    from xpeval.evals.cassettes.format import Interaction as Interaction
    from xpeval.evals.cassettes.format import load_cassette as load_cassette
    from xpeval.evals.cassettes.format import load_interactions as load_interactions
    from xpeval.evals.cassettes.meta import CassetteMeta as CassetteMeta
    from xpeval.evals.cassettes.meta import Mode as Mode
    from xpeval.evals.cassettes.meta import Source as Source
    from xpeval.evals.cassettes.store import CassetteStore as CassetteStore
    from xpeval.evals.scrub import PLACEHOLDER as PLACEHOLDER
    from xpeval.evals.scrub import Scrubber as Scrubber
