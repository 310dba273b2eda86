"""Handing a recorded conversation to another adapter: the conversations, and the matrix of
every ordered pair (docs/provider-loop-rules.md, "Handoff")."""
