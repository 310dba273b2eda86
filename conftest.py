"""pytest wiring shared by the whole suite."""

from __future__ import annotations

import os

# Tests never talk to real providers: make sure no ambient key leaks into a request or cassette.
for _name in (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY",
    "MOONSHOT_API_KEY", "MIMO_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "VERTEX_API_KEY",
):
    if os.environ.get(_name) and not os.environ.get("XPEVAL_LIVE"):
        os.environ.pop(_name)
