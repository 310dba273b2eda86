"""What a nightly produced: its plan, the suite's outcome, alerts and notes, and the summary it
prints and writes (nightly.txt, nightly.md, the live schema answers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from xpeval.evals.nightly.alerts import Alert, flipped_names
from xpeval.evals.nightly.plan import NightlyPlan
from xpeval.evals.nightly.schema_probes import SchemaProbe, probes_frame
from xpeval.evals.running.suite import SuiteOutcome
from xpeval.evals.scrub import scrub_line

EXIT_PASSED = 0
EXIT_ALERTS = 1
EXIT_NOTHING = 3
"""No adapter had a target: nothing was measured (a nightly that measured nothing is not green)."""


@dataclass
class NightlyOutcome:
    plan: NightlyPlan
    suite: SuiteOutcome | None = None
    run: str | None = None
    alerts: list[Alert] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)
    """What the run was compared with, one line each."""
    probes: list[SchemaProbe] = field(default_factory=list)
    history_file: Path | None = None
    started: list[str] = field(default_factory=list)
    """Local servers this nightly started (and stopped)."""
    allow_nothing: bool = False
    dry_run: bool = False
    """Planned only: nothing was sent, started or written."""

    @property
    def nothing(self) -> bool:
        return not self.plan.measured

    @property
    def passed(self) -> bool:
        return not self.alerts and (not self.nothing or self.allow_nothing)

    @property
    def exit_code(self) -> int:
        if self.nothing:
            return EXIT_PASSED if self.allow_nothing else EXIT_NOTHING
        return EXIT_ALERTS if self.alerts else EXIT_PASSED

    def verdict(self) -> str:
        if self.nothing:
            what = "nothing to measure" + (" (allowed)" if self.allow_nothing else ": FAILED")
            return f"nightly: {what} — no adapter has credentials or a local model serving it"
        if self.dry_run:
            measured, skipped = len(self.plan.measured), len(self.plan.skipped)
            return f"nightly (dry run): would measure {measured} adapter(s), {skipped} skipped"
        if self.alerts:
            return f"nightly: FAILED ({len(self.alerts)} alert(s))"
        return "nightly: passed"

    def lines(self) -> list[str]:
        out = [f"xpeval nightly {self.run}" if self.run else "xpeval nightly"]
        if self.plan.measured:
            out += ["targets:", *(f"  {t.line}" for t in self.plan.measured)]
        if self.plan.skipped:
            out += ["skipped:", *(f"  {t.adapter}: {t.reason}" for t in self.plan.skipped)]
        if self.started:
            out.append(f"local servers started for the run and stopped after: {', '.join(self.started)}")
        if self.probes:
            counted = pd.Series([p.answer for p in self.probes]).value_counts()
            said = ", ".join(f"{n} {answer}" for answer, n in counted.items())
            out.append(f"live schema acceptance: {len(self.probes)} probes ({said})")
        if self.compared:
            out += ["compared with:", *(f"  {line}" for line in self.compared)]
        if self.alerts:
            out += [f"alerts ({len(self.alerts)}):", *(f"  {alert.line()}" for alert in self.alerts)]
        if self.notes:
            out += ["notes:", *(f"  {note}" for note in self.notes)]
        if self.history_file is not None:
            out.append(f"history: {self.history_file}")
        out.append(self.verdict())
        return out

    def summary(self) -> str:
        """What the nightly printed and wrote to nightly.txt (scrubbed: base URLs carry keys)."""
        return scrub_line("\n".join(self.lines()))

    def markdown(self) -> str:
        """The summary as GitHub step-summary Markdown."""
        title = "passed" if self.passed and not self.nothing else self.verdict().removeprefix("nightly: ")
        lines = [f"## xpeval nightly: {title}", ""]
        if self.plan.measured:
            lines += ["| adapter | target |", "|---|---|"]
            lines += [
                f"| {t.adapter} | {t.line.split(': ', 1)[-1].replace('|', '/')} |" for t in self.plan.measured
            ]
        if self.plan.skipped:
            lines += ["", "Skipped:", ""]
            lines += [f"- **{t.adapter}**: {t.reason.replace('|', '/')}" for t in self.plan.skipped]
        if self.alerts:
            lines += [
                "",
                "| alert | adapter | model | metric | change | flipped |",
                "|---|---|---|---|---|---|",
            ]
            for a in self.alerts:
                change, flipped = a.change.replace("|", "/"), flipped_names(a.cases) if a.cases else ""
                cells = [f"{a.kind} vs {a.against}", a.adapter, a.model, a.metric, change, flipped]
                lines.append("| " + " | ".join(cells) + " |")
        if self.notes:
            lines += ["", *[f"> {note}" for note in self.notes]]
        return scrub_line("\n".join(lines) + "\n")


def write_reports(reports: Path, outcome: NightlyOutcome) -> None:
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "nightly.md").write_text(outcome.markdown(), encoding="utf-8")
    (reports / "nightly.txt").write_text(outcome.summary() + "\n", encoding="utf-8")
    if outcome.probes:
        probes_frame(outcome.probes).to_csv(reports / "schema_acceptance_live.csv", index=False)
