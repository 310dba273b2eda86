"""Why a nightly fails, one `Alert` each: regressions and conformance failures from the gate's
reports, and live schema answers that changed or disagree with the checker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import pandas as pd

from xpeval.evals.nightly.schema_probes import SchemaProbe
from xpeval.evals.verdict.baseline import Baseline, codes_by_row, comparable, flag_counts, split_key
from xpeval.evals.verdict.gate import Finding, GateReport
from xpeval.evals.verdict.scorecard import RATES

AlertKind = Literal["regression", "conformance", "unmeasured", "missing", "schema"]


@dataclass(frozen=True)
class Alert:
    """One reason the nightly fails: what changed, for which adapter and model, and where."""

    kind: AlertKind
    against: str
    """What it was compared with: the gate's baseline, the last good nightly, the checker."""
    adapter: str
    model: str
    metric: str
    change: str
    cases: tuple[str, ...] = ()
    """The cases that flipped for the worse (a schema alert: the tool)."""
    source: str = ""
    detail: str = ""

    def line(self) -> str:
        where = f"{self.model}, {self.source}" if self.source else self.model
        text = f"{self.kind.upper()} {self.adapter} ({where}) {self.metric} vs {self.against}: {self.change}"
        if self.cases:
            text += f"; flipped: {flipped_names(self.cases)}"
        if self.detail:
            text += f" — {self.detail}"
        return text


SHOWN = 12


def flipped_names(cases: Sequence[str]) -> str:
    shown = ", ".join(cases[:SHOWN])
    return f"{len(cases)} [{shown}{', ...' if len(cases) > SHOWN else ''}]"


def _pct(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k}/{n})" if n else "- (0/0)"


def finding_alerts(
    report: GateReport,
    compared: Baseline | None,
    frame: pd.DataFrame,
    against: str,
    *,
    rates_only: bool = False,
) -> list[Alert]:
    """The failures of a gate report as alerts, each rate's change counted on the shared cases."""
    current = codes_by_row(frame)
    by_class = {comparable(key): key for key in current}
    alerts = []
    for finding in report.failures:
        source, adapter, model = split_key(finding.key)
        if finding.metric in RATES:
            alerts.append(_rate_alert(finding, compared, current, by_class, against))
        elif rates_only:
            continue
        elif finding.metric.startswith("conformance"):
            case = finding.metric.partition(":")[2]
            cases = (case,) if case else ()
            alert = Alert(
                "conformance", against, adapter or "*", model or "-", "conformance", finding.message, cases
            )
            alerts.append(replace(alert, source=source))
        elif finding.metric == "measured":
            alert = Alert("unmeasured", against, adapter or "*", model or "-", "errors", finding.message)
            alerts.append(replace(alert, source=source))
        else:
            alert = Alert("missing", against, adapter, model, finding.metric, finding.message, finding.worse)
            alerts.append(replace(alert, source=source))
    return alerts


def _rate_alert(
    finding: Finding,
    compared: Baseline | None,
    current: dict[str, dict[str, str]],
    by_class: dict[tuple[str, str, str], str],
    against: str,
) -> Alert:
    """A rate that got worse: its k/n before and now on the shared cases, the cases that flipped."""
    source, adapter, model = split_key(finding.key)
    now_key = by_class.get(comparable(finding.key), "")
    before = (compared.rows if compared else {}).get(finding.key, {})
    now = current.get(now_key, {})
    shared = sorted(set(before) & set(now))
    k0, n0 = flag_counts((before[c] for c in shared), finding.metric)
    k1, n1 = flag_counts((now[c] for c in shared), finding.metric)
    detail = finding.message.split(" — ", 1)[1] if " — " in finding.message else ""
    change = f"{_pct(k0, n0)} -> {_pct(k1, n1)} on {len(shared)} shared cases"
    # A live row is compared with the baseline's cassette row
    # (`xpeval.evals.verdict.baseline.comparable`): the
    # alert names the row measured tonight, and which row it was held against.
    measured = split_key(now_key)[0] or source
    where = against if measured == source else f"{against} ({source} row)"
    return Alert("regression", where, adapter, model, finding.metric, change, finding.worse, measured, detail)


def schema_alerts(
    probes: Sequence[SchemaProbe], last: pd.DataFrame | None, last_run: str | None
) -> tuple[list[Alert], list[str]]:
    """Alerts for answers that disagree with the checker or refuse a tool the last good nightly
    had accepted; notes for answers that could not be had."""
    alerts: list[Alert] = []
    notes: list[str] = []
    before: dict[tuple[str, str, str], str] = {}
    if last is not None and not last.empty:
        before = {
            (str(r.adapter), str(r.model), str(r.schema)): str(r.answer) for r in last.itertuples(index=False)
        }
    for p in probes:
        said = f"{p.status}: {p.message}" if p.status else (p.message or "")
        if p.answer == "refused" and before.get((p.adapter, p.model, p.schema)) == "accepted":
            change = f"{p.schema} newly refused (accepted then): {said}"
            against = f"last good nightly {last_run}"
            alerts.append(
                Alert("schema", against, p.adapter, p.model, "schema acceptance", change, (p.schema,))
            )
        if p.agrees is False:
            if p.answer == "refused":
                change = f"{p.schema} refused, the checker predicts accepted: {said}"
            else:
                change = f"{p.schema} accepted, the checker predicts refused ({', '.join(p.rules)})"
            alerts.append(
                Alert(
                    "schema",
                    "the offline checker",
                    p.adapter,
                    p.model,
                    "schema acceptance",
                    change,
                    (p.schema,),
                )
            )
    errors = [p for p in probes if p.answer == "error"]
    if errors:
        shown = ", ".join(f"{p.adapter}/{p.schema}" for p in errors[:5])
        notes.append(
            f"{len(errors)} schema probe(s) got no verdict (rate limits, server errors, timeouts): {shown}"
            f"{', ...' if len(errors) > 5 else ''}; first: {errors[0].message}"
        )
    return alerts, notes
