"""The handoff matrix: each recorded conversation continued through every registered adapter.

For a conversation recorded through adapter A and a target B, the history is converted for B
(`xpeval.adapters.wires.handoff.hand_off`); unless a rule makes the handoff impossible, B's
request must then pass B's request validation (its SDK's request types), B's schema checker
(`evals/acceptance/checker`, the tools as B sends them) and the strict emulator (B's provider's
reasoning-state rules, answering its real refusal), B's adapter sending it over its SDK. A cell
is `pass`, the rules that make the pair impossible, or the check that failed (a bug: the
command exits non-zero).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2

from xpeval.adapters.adapter import Adapter, AdapterSettings
from xpeval.adapters.contract import TurnRequest, TurnResult
from xpeval.adapters.registry import create_adapter, direct_adapter_for_wire
from xpeval.adapters.wires.handoff import HandoffDecision, Party, demanded_state, hand_off
from xpeval.adapters.wires.loop_rules import rules_of
from xpeval.evals.acceptance.checker import check_request, definitions_in_request, mode_for
from xpeval.evals.cases import load_cases
from xpeval.evals.cases.model import is_multi_step
from xpeval.evals.emulator import Reply, ScriptedTransport
from xpeval.evals.handoff.conversations import (
    RecordedConversation,
    Skipped,
    cassette_conversations,
    corpus_conversations,
)
from xpeval.evals.handoff.switch import party_of

Verdict = Literal["pass", "impossible", "fail"]
CONTINUED = TurnResult(text="Continued after the handoff.")
"""What the strict emulator answers a handed-off request that it accepts."""


@dataclass(frozen=True)
class PairOutcome:
    """One conversation handed from its source to one target."""

    conversation: str
    source: str
    target: str
    verdict: Verdict
    rule: str | None
    """The rule that makes it impossible, or the check that failed."""
    detail: str = ""
    decisions: tuple[HandoffDecision, ...] = ()

    def row(self) -> dict[str, object]:
        return {
            "conversation": self.conversation,
            "source": self.source,
            "target": self.target,
            "verdict": self.verdict,
            "rule": self.rule,
            "detail": self.detail,
            "decisions": [d.row() for d in self.decisions],
        }


@dataclass
class _Relay:
    """The transport of one target's adapter: each check's strict script in turn."""

    script: ScriptedTransport | None = None

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert self.script is not None, "no strict script for this request"
        return self.script(request)


@dataclass
class _Target:
    adapter: Adapter
    relay: _Relay
    party: Party


async def _check(conversation: RecordedConversation, source: Party, target: _Target) -> PairOutcome:
    handoff = hand_off(conversation.messages, source, target.party)

    def outcome(verdict: Verdict, rule: str | None, detail: str) -> PairOutcome:
        return PairOutcome(
            conversation.id,
            conversation.source,
            target.party.adapter,
            verdict,
            rule,
            detail,
            handoff.decisions,
        )

    impossible = handoff.impossible
    adapter = target.adapter
    request = TurnRequest(model=adapter.default_model, messages=handoff.messages, tools=conversation.tools)
    prepared = adapter.prepare(request)
    if prepared.tools.refusals:
        return outcome("fail", "tools-refused", "; ".join(prepared.tools.refusals))
    try:
        adapter.wire.validate_encoded(prepared.kwargs)
    except Exception as exc:  # the SDK's types say why; any exception is the finding
        return outcome("fail", "request-validation", f"{type(exc).__name__}: {exc}"[:500])
    contract = adapter.contract
    mode = mode_for(contract.wire, contract.schema_dialect, prepared.tools.strict)
    violations = check_request(mode, definitions_in_request(contract.wire, prepared.kwargs))
    if violations:
        return outcome("fail", "schema-checker", "; ".join(sorted({v.rule for v in violations})))
    script = ScriptedTransport(adapter.wire, [Reply(result=CONTINUED)], strict=True)
    rules = rules_of(adapter.wire)
    script.served.extend(demanded_state(conversation.messages, source, target.party, conversation.id, rules))
    target.relay.script = script
    result = await adapter.turn(request)
    error = result.error
    if impossible is not None:
        # The rule's verdict is confirmed by the provider's refusal of the best conversion there is.
        if error is not None and error.kind == "reasoning_state":
            return outcome("impossible", impossible.rule, error.message[:300])
        return outcome(
            "fail", "impossible-but-accepted", f"{impossible.rule}: the strict emulator accepted it"
        )
    if error is not None:
        return outcome("fail", "strict-emulator", f"{error.kind}: {error.message}"[:500])
    return outcome("pass", None, "")


@dataclass(frozen=True)
class HandoffMatrix:
    """Every conversation handed to every target, and the cells they make."""

    adapters: tuple[str, ...]
    conversations: tuple[str, ...]
    outcomes: tuple[PairOutcome, ...] = field(default_factory=tuple)

    def cell(self, source: str, target: str) -> str:
        """`pass`, the impossible rules (sorted, `, `-joined), `FAIL <check>`, or `-` (no
        conversation recorded through `source`)."""
        mine = [o for o in self.outcomes if o.source == source and o.target == target]
        if not mine:
            return "-"
        failed = sorted({o.rule or "" for o in mine if o.verdict == "fail"})
        if failed:
            return "FAIL " + ", ".join(failed)
        rules = sorted({o.rule or "" for o in mine if o.verdict == "impossible"})
        return ", ".join(rules) if rules else "pass"

    def cells(self) -> dict[tuple[str, str], str]:
        return {(s, t): self.cell(s, t) for s in self.adapters for t in self.adapters}

    @property
    def failed(self) -> list[PairOutcome]:
        return [o for o in self.outcomes if o.verdict == "fail"]

    def figures(self) -> dict[str, Any]:
        """Pairs passing, impossible (by rule), failing, without conversations; conversations."""
        cells = [c for c in self.cells().values()]
        impossible = Counter(c for c in cells if c not in ("pass", "-") and not c.startswith("FAIL"))
        return {
            "conversations": len(self.conversations),
            "pairs": len(cells),
            "pass": cells.count("pass"),
            "impossible": sum(impossible.values()),
            "impossible_by_rule": dict(sorted(impossible.items())),
            "fail": sum(1 for c in cells if c.startswith("FAIL")),
            "no_conversation": cells.count("-"),
        }


async def _run(conversations: Sequence[RecordedConversation], adapters: Sequence[str]) -> list[PairOutcome]:
    targets: dict[str, _Target] = {}
    for adapter_id in adapters:
        relay = _Relay()
        settings = AdapterSettings(transport=httpx2.MockTransport(relay), timeout=30.0)
        targets[adapter_id] = _Target(create_adapter(adapter_id, settings), relay, party_of(adapter_id))
    outcomes: list[PairOutcome] = []
    try:
        for conversation in conversations:
            source = party_of(conversation.source)
            for adapter_id in adapters:
                outcomes.append(await _check(conversation, source, targets[adapter_id]))
    finally:
        for target in targets.values():
            await target.adapter.aclose()
    return outcomes


def handoff_matrix(conversations: Iterable[RecordedConversation], adapters: Sequence[str]) -> HandoffMatrix:
    """Every conversation (whose source is one of `adapters`) handed to every one of `adapters`."""
    kept = [c for c in conversations if c.source in adapters]
    outcomes = asyncio.run(_run(kept, list(adapters)))
    return HandoffMatrix(
        adapters=tuple(adapters), conversations=tuple(c.id for c in kept), outcomes=tuple(outcomes)
    )


def check_handoff(conversation: RecordedConversation, target: str) -> PairOutcome:
    """One conversation handed to one adapter (`target`), judged as the matrix judges a cell."""
    return asyncio.run(_run([conversation], [target]))[0]


CORPUS_FOLDERS = {"google-generate-content": "google-genai"}
"""Folders of the shared corpus named otherwise than the wire they hold (its PROVENANCE.md)."""


def corpus_adapters(root: Path) -> dict[str, str]:
    """Each folder of a recordings tree whose wire has a direct adapter, and that adapter."""
    found: dict[str, str] = {}
    for folder in sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        try:
            found[folder] = direct_adapter_for_wire(CORPUS_FOLDERS.get(folder, folder))
        except Exception:  # a folder of a wire no adapter speaks (ollama-chat): not handed off
            continue
    return found


def recorded_conversations(
    cassettes: Path | None, corpora: Sequence[Path], adapters: Sequence[str], per_source: int | None
) -> list[RecordedConversation | Skipped]:
    """The project's committed multi-turn cassettes (the first `per_source` conversations of each
    adapter, tools as the built-in cases define them) and every conversation of each corpus."""
    found: list[RecordedConversation | Skipped] = []
    if cassettes is not None:
        tools = {
            item.case.id: list(item.case.all_tools)
            for item in load_cases()
            if is_multi_step(item.case.category) and item.case.environment is None
        }
        found += cassette_conversations(cassettes, adapters, tools, per_source)
    for root in corpora:
        found += corpus_conversations(root, corpus_adapters(root))
    return found


def markdown_table(matrix: HandoffMatrix) -> str:
    """The matrix as a Markdown table: rows the source, columns the target."""
    lines = [
        "| source \\ target | " + " | ".join(matrix.adapters) + " |",
        "|---" * (len(matrix.adapters) + 1) + "|",
    ]
    for source in matrix.adapters:
        lines.append(f"| {source} | " + " | ".join(matrix.cell(source, t) for t in matrix.adapters) + " |")
    return "\n".join(lines)


__all__ = [
    "HandoffMatrix",
    "PairOutcome",
    "check_handoff",
    "corpus_adapters",
    "handoff_matrix",
    "markdown_table",
    "recorded_conversations",
]
