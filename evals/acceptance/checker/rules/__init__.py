"""One module per provider: its rules (id, summary, evidence) and the profile of each mode."""

from __future__ import annotations

from xpeval.evals.acceptance.checker._types import ProviderMode
from xpeval.evals.acceptance.checker.keywords import Profile
from xpeval.evals.acceptance.checker.rules import anthropic, gemini, moonshot, openai

PROFILES: dict[ProviderMode, Profile] = {
    **openai.PROFILES,
    **anthropic.PROFILES,
    **gemini.PROFILES,
    **moonshot.PROFILES,
}

__all__ = ["PROFILES"]
