"""One module per provider: its rules (id, summary, evidence) and the profile of each mode."""

from __future__ import annotations

from evals.acceptance._types import ProviderMode
from evals.acceptance.checks import Profile
from evals.acceptance.rules import anthropic, gemini, moonshot, openai

PROFILES: dict[ProviderMode, Profile] = {
    **openai.PROFILES,
    **anthropic.PROFILES,
    **gemini.PROFILES,
    **moonshot.PROFILES,
}

__all__ = ["PROFILES"]
