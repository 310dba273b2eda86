"""The handoff matrix of a project's recordings, as `xpeval handoff` and the README show it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xpeval.adapters.registry import adapter_ids
from xpeval.adapters.wires.handoff import HANDOFF_RULES
from xpeval.errors import UserError
from xpeval.evals.handoff.conversations import RecordedConversation, Skipped
from xpeval.evals.handoff.matrix import HandoffMatrix, handoff_matrix, markdown_table, recorded_conversations
from xpeval.evals.project import project_settings


@dataclass(frozen=True)
class HandoffReport:
    matrix: HandoffMatrix
    skipped: tuple[Skipped, ...]

    def markdown(self) -> str:
        """The table, its figures and the rules its cells name (what the README carries)."""
        figures = self.matrix.figures()
        by_rule = ", ".join(f"{rule} {count}" for rule, count in figures["impossible_by_rule"].items())
        lines = [
            markdown_table(self.matrix),
            "",
            f"{figures['pairs']} ordered pairs over {figures['conversations']} recorded conversations: "
            f"{figures['pass']} pass, {figures['impossible']} impossible ({by_rule or 'none'}), "
            f"{figures['fail']} fail.",
        ]
        named = sorted({o.rule for o in self.matrix.outcomes if o.verdict == "impossible" and o.rule})
        lines += [f"- `{rule}`: {HANDOFF_RULES[rule].summary}" for rule in named if rule in HANDOFF_RULES]
        return "\n".join(lines)


def matrix_report(cassettes: Path | None, corpora: Sequence[Path], per_source: int) -> HandoffReport:
    """Every registered adapter's committed multi-turn cassettes (`cassettes`, default the
    project's) and every conversation of `corpora`, handed to every registered adapter."""
    adapters = adapter_ids()
    root = cassettes if cassettes is not None else project_settings().cassettes
    for corpus in corpora:
        if not corpus.is_dir():
            raise UserError(f"{corpus}: no such folder of recordings")
    found = recorded_conversations(root if root.is_dir() else None, corpora, adapters, per_source)
    conversations = [c for c in found if isinstance(c, RecordedConversation)]
    if not conversations:
        raise UserError(
            f"no recorded multi-turn conversation with tool calls in {root} or {list(map(str, corpora))}"
        )
    skipped = tuple(c for c in found if isinstance(c, Skipped))
    return HandoffReport(handoff_matrix(conversations, adapters), skipped)


__all__ = ["HandoffReport", "matrix_report"]
