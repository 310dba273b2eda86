"""What an adapter does with a tool's schema, in the one set of words the `schemas` command, the
written tables and the HTML report all use (docs/tools-input.md, "What the table says"): each
per-adapter count of `xpeval.evals.acceptance.table.summary`, its label and what it counts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SchemaOutcome:
    """One count of tools per adapter: the summary's column, the word shown for it, its meaning."""

    column: str
    label: str
    meaning: str


SCHEMA_OUTCOMES: tuple[SchemaOutcome, ...] = (
    SchemaOutcome("as_is", "as-is", "sent unchanged"),
    SchemaOutcome("rewritten", "rewritten", "sent rewritten (in form only, or with the losses counted next)"),
    SchemaOutcome(
        "lossy_validation", "validation loss", "sent with a loss that changes what a validator accepts"
    ),
    SchemaOutcome(
        "lossy_guidance_only",
        "guidance loss",
        "sent with losses that change only what the model is told (and none of the kind before)",
    ),
    SchemaOutcome(
        "sent_with_violations", "violating", "sent although a published rule of the provider refuses it"
    ),
    SchemaOutcome("refused", "refused", "not sent: the adapter refuses it"),
)

OUTCOME_LABELS: dict[str, str] = {outcome.column: outcome.label for outcome in SCHEMA_OUTCOMES}
"""Summary column -> the word every table and the report show for it."""


def outcome_legend() -> str:
    """`as-is: sent unchanged; rewritten: ...`: what each label counts, in one line."""
    return "; ".join(f"{outcome.label}: {outcome.meaning}" for outcome in SCHEMA_OUTCOMES)
