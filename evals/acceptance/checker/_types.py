"""What the acceptance checker answers with: violations of a provider's published rules."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

ProviderMode = str
"""A rule set's name: an acceptance mode some registered wire declares (`WirePlugin.acceptance`;
a plugin's is `<wire>` or `<wire>:<variant>`)."""


@dataclass(frozen=True)
class Rule:
    """One published rule of one provider, with the evidence for it.

    `source` carries the evidence tag and link exactly as `docs/provider-schema-rules.md` cites it
    ([doc], [err], [lib]); rules that the doc only marks [claim] or "unconfirmed" are not
    enforced.
    """

    id: str
    summary: str
    source: str


class Violation(BaseModel):
    """One reason the provider would refuse the tool definition as sent."""

    model_config = ConfigDict(frozen=True)

    pointer: str
    """JSON pointer into the tool definition as sent ("/function/parameters/properties/x")."""
    rule: str
    keyword: str | None = None
    """The schema keyword (or definition field) the provider would name."""
    message: str
    source: str


def violation(rule: Rule, pointer: str, message: str, keyword: str | None = None) -> Violation:
    return Violation(pointer=pointer, rule=rule.id, keyword=keyword, message=message, source=rule.source)
