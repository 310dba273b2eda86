"""What each provider accepts: an independent checker of tool definitions as sent.

`check(mode, definition)` lists the provider rules (from `docs/provider-schema-rules.md`, each with its
evidence) that a tool definition breaks; an empty list means no published rule refuses it. It
judges what would go on the wire, so `definition` is in the mode's REST shape
(`build_definition` makes one; `mode_for` names the mode an adapter's wire and dialect send).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "ProviderMode": "xpeval.evals.acceptance.checker._types",
    "Rule": "xpeval.evals.acceptance.checker._types",
    "Violation": "xpeval.evals.acceptance.checker._types",
    "build_definition": "xpeval.evals.acceptance.checker.layout",
    "check": "xpeval.evals.acceptance.checker.checking",
    "check_request": "xpeval.evals.acceptance.checker.checking",
    "definitions_in_request": "xpeval.evals.acceptance.checker.layout",
    "layout_for": "xpeval.evals.acceptance.checker.layout",
    "mode_for": "xpeval.evals.acceptance.checker.layout",
    "sent_schema": "xpeval.evals.acceptance.checker.layout",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.acceptance.checker._types import ProviderMode as ProviderMode
    from xpeval.evals.acceptance.checker._types import Rule as Rule
    from xpeval.evals.acceptance.checker._types import Violation as Violation
    from xpeval.evals.acceptance.checker.checking import check as check
    from xpeval.evals.acceptance.checker.checking import check_request as check_request
    from xpeval.evals.acceptance.checker.layout import build_definition as build_definition
    from xpeval.evals.acceptance.checker.layout import definitions_in_request as definitions_in_request
    from xpeval.evals.acceptance.checker.layout import layout_for as layout_for
    from xpeval.evals.acceptance.checker.layout import mode_for as mode_for
    from xpeval.evals.acceptance.checker.layout import sent_schema as sent_schema
