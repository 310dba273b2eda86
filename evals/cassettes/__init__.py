"""Cassettes: reading vcrpy recordings (ours and other tools'), storing, matching, scrubbing."""

from evals.cassettes.format import CassetteError, Interaction, load_cassette, load_interactions

__all__ = ["CassetteError", "Interaction", "load_cassette", "load_interactions"]
