"""Each wire's name, which is also the key of the wire's own entry in `provider_data`: what
decode keeps for a later turn (reasoning items, thinking blocks, thought signatures), which
encode sends back and render serves. Codec and rendering both read it from here."""

from __future__ import annotations

from xpeval.adapters.contract import WireName

OPENAI_CHAT: WireName = "openai-chat"
OPENAI_RESPONSES: WireName = "openai-responses"
ANTHROPIC_MESSAGES: WireName = "anthropic-messages"
GOOGLE_GENAI: WireName = "google-genai"
