"""The CI gate: conformance failures and metric drops against a baseline (pure).

A run fails the gate when any episode had a conformance failure (a replay problem or a
runner error), when a baseline row is missing, or when a rate dropped beyond noise: its
Wilson interval no longer overlaps the baseline's, or it fell by more than a configured
tolerance. Rising error and malformed rates count as drops.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pandas as pd

from evals.errors import UserError
from evals.scorecard import RATES, wilson

LOWER_IS_BETTER = frozenset({"malformed", "errors"})
CONFORMANCE_KINDS = frozenset({"cassette", "runner"})
BASELINE_VERSION = 1


@dataclass(frozen=True)
class Finding:
    key: str
    metric: str
    ok: bool
    message: str


@dataclass
class GateReport:
    findings: list[Finding] = field(default_factory=list)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    @property
    def passed(self) -> bool:
        return not self.failures


def row_key(source: str, adapter: str, model: str) -> str:
    return f"{source}|{adapter}|{model}"


def baseline_from(card: pd.DataFrame) -> dict[str, Any]:
    """A baseline document from a scorecard: counts, so intervals can be recomputed."""
    rows: dict[str, Any] = {}
    for _, r in card.iterrows():
        rows[row_key(str(r["source"]), r["adapter"], r["model"])] = {
            rate: {"k": int(r[f"{rate}_k"]), "n": int(r[f"{rate}_n"])} for rate in RATES
        }
    return {"version": BASELINE_VERSION, "rows": rows}


PARTIAL_RUN_NOTE = (
    "a run of some cases (--cases/--categories/--shard) is gated on conformance only: its rates "
    "cannot be compared with the baseline's"
)


def baseline_for_run(
    baseline: dict[str, Any], adapters: Iterable[str], some_cases: bool
) -> dict[str, Any] | None:
    """What a run is compared with: the baseline rows of the adapters it ran (the others are not
    "missing"), or nothing when it ran only some cases (PARTIAL_RUN_NOTE)."""
    if some_cases:
        return None
    wanted = set(adapters)
    rows = {key: value for key, value in baseline["rows"].items() if _adapter_of(key) in wanted}
    return {**baseline, "rows": rows}


def _adapter_of(key: str) -> str | None:
    parts = key.split("|", 2)
    return parts[1] if len(parts) == 3 else None


def read_baseline(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"baseline {path} does not exist (create it with --update-baseline)") from None
    except ValueError as exc:
        raise UserError(f"baseline {path} is not valid JSON: {exc}") from exc
    if (
        not isinstance(document, dict)
        or document.get("version") != BASELINE_VERSION
        or "rows" not in document
    ):
        raise UserError(f"baseline {path} is not an xpeval baseline (version {BASELINE_VERSION})")
    return document


def evaluate(
    frame: pd.DataFrame, card: pd.DataFrame, baseline: dict[str, Any] | None, tolerance: float = 0.0
) -> GateReport:
    """Every check the gate makes, passed or not."""
    report = GateReport()
    broken = frame[frame["error_kind"].isin(CONFORMANCE_KINDS)] if not frame.empty else frame
    for _, r in broken.iterrows():
        report.findings.append(
            Finding(
                key=row_key(r["source"], r["adapter"], r["model"]),
                metric=f"conformance:{r['case_id']}",
                ok=False,
                message=f"{r['adapter']} / {r['case_id']}: {r['reason']}",
            )
        )
    if not len(broken):
        report.findings.append(
            Finding(
                key="*",
                metric="conformance",
                ok=True,
                message=f"{len(frame)} episodes, no conformance failure",
            )
        )
    if baseline is None:
        return report
    current = baseline_from(card)["rows"]
    for key, metrics in baseline["rows"].items():
        if key not in current:
            report.findings.append(
                Finding(
                    key=key, metric="present", ok=False, message=f"{key}: in the baseline but not in this run"
                )
            )
            continue
        for rate, base in metrics.items():
            now = current[key].get(rate)
            if now is None:
                continue
            report.findings.append(_compare(key, rate, base, now, tolerance))
    return report


def _compare(key: str, rate: str, base: dict[str, int], now: dict[str, int], tolerance: float) -> Finding:
    if base["n"] == 0 or now["n"] == 0:
        return Finding(key, rate, True, f"{key} {rate}: nothing to compare")
    p0, p1 = base["k"] / base["n"], now["k"] / now["n"]
    lo0, hi0 = wilson(base["k"], base["n"])
    lo1, hi1 = wilson(now["k"], now["n"])
    worse = p1 > p0 if rate in LOWER_IS_BETTER else p1 < p0
    drop = abs(p1 - p0)
    separated = (lo1 > hi0) if rate in LOWER_IS_BETTER else (hi1 < lo0)
    beyond_tolerance = tolerance > 0 and drop > tolerance
    ok = not (worse and (separated or beyond_tolerance))
    message = (
        f"{key} {rate}: {p0:.1%} ({base['k']}/{base['n']}) -> {p1:.1%} ({now['k']}/{now['n']})"
        f"{'' if ok else ' — worse beyond noise'}"
    )
    return Finding(key, rate, ok, message)


def diff_text(report: GateReport) -> str:
    lines = []
    for finding in report.findings:
        if not finding.ok:
            lines.append(f"FAIL {finding.message}")
    changed = [f for f in report.findings if f.ok and "->" in f.message and not _same(f.message)]
    lines.extend(f"  ok {f.message}" for f in changed)
    lines.append("gate: " + ("passed" if report.passed else f"FAILED ({len(report.failures)} problem(s))"))
    return "\n".join(lines)


def _same(message: str) -> bool:
    before, _, after = message.partition("->")
    return before.split(":")[-1].strip() == after.strip()


def step_summary(report: GateReport) -> str:
    lines = ["## xpeval gate: " + ("passed" if report.passed else "FAILED"), ""]
    if report.failures:
        lines += ["| check | detail |", "|---|---|"]
        lines += [f"| {f.metric} | {f.message.replace('|', '/')} |" for f in report.failures]
    return "\n".join(lines) + "\n"


def junit_xml(report: GateReport) -> str:
    suite = ElementTree.Element(
        "testsuite",
        name="xpeval-gate",
        tests=str(len(report.findings)),
        failures=str(len(report.failures)),
        errors="0",
    )
    for finding in report.findings:
        case = ElementTree.SubElement(suite, "testcase", classname=finding.key, name=finding.metric)
        if not finding.ok:
            failure = ElementTree.SubElement(case, "failure", message=finding.message[:500])
            failure.text = finding.message
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)

