"""What each provider accepts: an independent checker of tool definitions as sent.

`check(mode, definition)` lists the provider rules (from `docs/provider-schema-rules.md`, each with its
evidence) that a tool definition breaks; an empty list means no published rule refuses it. It
judges what would go on the wire, so `definition` is in the mode's REST shape
(`build_definition` makes one; `mode_for` names the mode an adapter's wire and dialect send).
"""

from __future__ import annotations

from xpeval.evals.acceptance.checker._types import PROVIDER_MODES, ProviderMode, Rule, Violation
from xpeval.evals.acceptance.checker.check import check, check_request
from xpeval.evals.acceptance.checker.layout import (
    MODES,
    build_definition,
    definitions_in_request,
    layout_for,
    mode_for,
    sent_schema,
)

__all__ = [
    "MODES",
    "PROVIDER_MODES",
    "ProviderMode",
    "Rule",
    "Violation",
    "build_definition",
    "check",
    "check_request",
    "definitions_in_request",
    "layout_for",
    "mode_for",
    "sent_schema",
]
