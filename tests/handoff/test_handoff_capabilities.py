"""`xpeval adapters --capabilities` shows what each adapter does with another provider's history,
from its declarations: Gemini's skip signature, `reasoning_content` converted, a pending foreign
tool loop impossible for Claude with thinking on (docs/provider-loop-rules.md, "Handoff")."""

from __future__ import annotations

import json

from tests._cli import Cli


def test_the_capability_matrix_shows_each_adapters_handoff_behaviour(cli: Cli) -> None:
    done = cli("adapters", "--capabilities", "--json")
    assert done.returncode == 0, done.stderr
    handoff = {row["id"]: row["handoff"] for row in json.loads(done.stdout)}
    assert handoff["vertex-ai"]["thought signature"] == "converted (gemini-foreign-calls)"
    assert handoff["moonshot"]["reasoning_content"] == "converted (reasoning-content-presence)"
    assert handoff["openai-chat"]["reasoning text"] == "dropped (no-slot)"
    for claude in ("anthropic-messages", "bedrock-converse"):
        assert handoff[claude]["pending tool loop"] == "impossible (thinking-first)"
    assert all(row["signed state"] == "dropped (bound-to-issuer)" for row in handoff.values())
    table = cli("adapters", "--capabilities").stdout
    google = next(line for line in table.splitlines() if "│ google-genai " in line)
    assert "thought signature:" in google
    chat = next(line for line in table.splitlines() if "│ openai-chat " in line)
    assert "call_[a-zA-Z0-9_-]{1,35}" in chat  # the call-id pattern is never cut short
