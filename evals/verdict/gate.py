"""The CI gate: conformance failures and regressions against a baseline (pure).

A run fails the gate when an episode had a conformance failure (a replay problem or a runner
error), when a row measured nothing (every episode an error), when a baseline row or case is
missing, or when a row got worse on the same cases:
- a deterministic (emulated) row compares exactly: one case that flipped for the worse fails;
- any other row gets an exact paired test per rate: McNemar's test on the discordant cases
  (the cases that flipped one way or the other), two-sided, with the family-wise error rate
  held at `alpha` across every row and rate by Holm's step-down procedure. A rate whose
  discordant cases are too few to ever reach `alpha` cannot be rejected and is left out of the
  family (Tarone's refinement: it can never count as a regression, so it costs no power);
- `--tolerance` adds an absolute floor: a drop on the shared cases larger than it fails too.
A failure names the cases that flipped; improvements are listed as well.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from xml.etree import ElementTree

import pandas as pd

from xpeval.errors import UserError
from xpeval.evals.verdict.baseline import (
    BASELINE_VERSION,
    CONFORMANCE_KINDS,
    DETERMINISTIC_SOURCES,
    FIRST_BASELINE_HINT,
    Baseline,
    codes_by_row,
    comparable,
    flag_counts,
    passed,
    row_key,
    split_key,
)
from xpeval.evals.verdict.paired_test import ALPHA, can_reject, holm, mcnemar_exact
from xpeval.evals.verdict.scorecard import RATES

SHOWN_CASES = 12


@dataclass(frozen=True)
class Finding:
    key: str
    metric: str
    ok: bool
    message: str
    worse: tuple[str, ...] = ()
    """Cases that flipped for the worse (pass -> fail)."""
    better: tuple[str, ...] = ()
    p_value: float | None = None
    """Holm-adjusted p of the paired test, when one was made."""


@dataclass(frozen=True)
class GateSummary:
    """What the verdict compared, in numbers (the line that ends `run` and `gate`)."""

    episodes: int
    rows: int
    baseline: str | None = None
    """The baseline file compared with (None: not compared with one)."""
    compared_rows: int = 0
    worse: int = 0
    """(row, case) pairs that flipped pass -> fail on any rate."""
    better: int = 0
    new_rows: int = 0
    new_cases: int = 0

    def line(self) -> str:
        judged = f"{self.episodes} episode(s) in {self.rows} row(s)"
        if self.baseline is None:
            return f"{judged}; not compared with a baseline"
        new = f"; new, not compared: {self.new_rows} row(s), {self.new_cases} case(s)"
        return (
            f"{judged}; {self.compared_rows} row(s) compared with {self.baseline}: "
            f"{self.worse} case(s) worse, {self.better} better{new}"
        )


@dataclass
class GateReport:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the verdict rests on, said once (e.g. a run compared on conformance only)."""
    basis: str | None = None
    """Said in the verdict line when the run was not compared with a baseline: what it was
    judged on instead (`conformance only, --no-baseline`)."""
    summary: GateSummary | None = None

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class RunScope:
    """What a run covered, from its header: which adapters and models, which case set, all of
    its cases or some."""

    adapters: frozenset[str]
    case_set: str
    all_cases: bool = True
    pairs: frozenset[tuple[str, str]] | None = None
    """(adapter, model) pairs the run planned; None: every model of its adapters."""

    def covers(self, adapter: str, model: str) -> bool:
        if adapter not in self.adapters:
            return False
        return self.pairs is None or (adapter, model) in self.pairs


def baseline_for_run(baseline: Baseline, scope: RunScope, path: object = "the baseline") -> Baseline:
    """What the run is compared with: the baseline rows of the adapters it ran (the others are
    not "missing"). A UserError when the baseline is for another case set or has no row of this
    run: a comparison with nothing would pass whatever the run did."""
    if baseline.case_set != scope.case_set:
        raise UserError(
            f"baseline {path} is for case set {baseline.case_set!r}, this run used {scope.case_set!r}: pass "
            "that case set's own baseline, or --no-baseline to gate on conformance only"
        )
    rows = rows_of_run(baseline, scope).rows
    if not rows:
        ran = ", ".join(sorted(scope.adapters)) or "none"
        raise UserError(
            f"baseline {path} has no row of this run's adapters ({ran}): it would compare nothing; "
            f"{FIRST_BASELINE_HINT}"
        )
    return dataclasses.replace(baseline, rows=rows)


def accepted_regressions(report: GateReport) -> list[str]:
    """What a baseline written from this failing run accepts: every case that flipped for the
    worse (row, rate, case), and every other failure by its message (a row or case gone)."""
    lines: list[str] = []
    for finding in report.failures:
        if finding.worse:
            lines.extend(f"{finding.key} {finding.metric}: {case}" for case in finding.worse)
        else:
            lines.append(finding.message)
    return lines


def rows_of_run(baseline: Baseline, scope: RunScope) -> Baseline:
    """The baseline's rows of the adapters and models the run planned (maybe none)."""
    rows = {key: cases for key, cases in baseline.rows.items() if scope.covers(*split_key(key)[1:])}
    return dataclasses.replace(baseline, rows=rows)


@dataclass
class _Pairing:
    key: str
    rate: str
    shared: int
    worse: list[str]
    better: list[str]
    before: tuple[int, int]
    after: tuple[int, int]

    @property
    def drop(self) -> float:
        k0, n0 = self.before
        k1, n1 = self.after
        if not n0 or not n1:
            return 0.0
        change = k1 / n1 - k0 / n0
        return change if self.rate in ("malformed", "errors") else -change


def evaluate(
    frame: pd.DataFrame,
    baseline: Baseline | None,
    scope: RunScope | None = None,
    *,
    tolerance: float = 0.0,
    alpha: float = ALPHA,
) -> GateReport:
    """Every check the gate makes, passed or not."""
    report = GateReport()
    report.findings.extend(_conformance(frame))
    report.findings.extend(_nothing_measured(frame))
    rows = 0 if frame.empty else frame.groupby(["source", "adapter", "model"]).ngroups
    report.summary = GateSummary(episodes=len(frame), rows=rows)
    if baseline is None:
        return report
    if baseline.version != BASELINE_VERSION:
        report.notes.append(
            f"the baseline is version {baseline.version}: rates it lacks (schema_valid) are not compared "
            "until it is written again (`xpeval gate --update-baseline`)"
        )
    current = codes_by_row(frame)
    by_class = {comparable(key): key for key in current}
    pairings: list[_Pairing] = []
    compared: set[str] = set()
    new_cases = 0
    for key, before in sorted(baseline.rows.items()):
        now_key = by_class.get(comparable(key))
        if now_key is None:
            _not_in_run(report, key, current)
            continue
        compared.add(now_key)
        now = current[now_key]
        if scope is None or scope.all_cases:
            report.findings.extend(_missing_cases(key, before, now))
        new = sorted(set(now) - set(before))
        new_cases += len(new)
        if new:
            report.notes.append(f"{key}: {len(new)} case(s) not in the baseline, not compared: {_names(new)}")
        pairings.extend(_pair(key, before, now))
    for key in sorted(set(current) - compared):
        report.notes.append(f"{key}: not in the baseline, not compared")
    report.summary = GateSummary(
        episodes=len(frame),
        rows=rows,
        baseline=baseline.source or "the baseline",
        compared_rows=len(compared),
        worse=len({(p.key, case) for p in pairings for case in p.worse}),
        better=len({(p.key, case) for p in pairings for case in p.better}),
        new_rows=len(set(current) - compared),
        new_cases=new_cases,
    )
    replay_problems = {
        (f.key, f.metric.split(":", 1)[1]) for f in report.findings if f.metric.startswith("conformance:")
    }
    report.findings.extend(_judge(pairings, tolerance, alpha, replay_problems))
    return report


def _not_in_run(report: GateReport, key: str, current: dict[str, dict[str, str]]) -> None:
    """A baseline row this run has no row of: measured from another source (a note), or absent."""
    other = [k for k in current if comparable(k)[1:] == comparable(key)[1:]]
    if other:
        report.notes.append(f"{key}: this run measured it from another source ({other[0]}): not compared")
    else:
        report.findings.append(Finding(key, "present", False, f"{key}: in the baseline but not in this run"))


def _missing_cases(key: str, before: dict[str, str], now: dict[str, str]) -> list[Finding]:
    """A baseline row's cases this run did not play (a run of all cases must play them all)."""
    missing = sorted(set(before) - set(now))
    if not missing:
        return []
    message = f"{key}: {len(missing)} baseline case(s) not run: {_names(missing)}"
    return [Finding(key, "cases", False, message, worse=tuple(missing))]


def _conformance(frame: pd.DataFrame) -> list[Finding]:
    broken = frame[frame["error_kind"].isin(CONFORMANCE_KINDS)] if not frame.empty else frame
    findings = [
        Finding(
            key=row_key(r["source"], r["adapter"], r["model"]),
            metric=f"conformance:{r['case_id']}",
            ok=False,
            message=f"{r['adapter']} / {r['case_id']}: {r['reason']}",
        )
        for r in broken.to_dict("records")
    ]
    if not findings:
        findings.append(Finding("*", "conformance", True, f"{len(frame)} episodes, no conformance failure"))
    return findings


def _nothing_measured(frame: pd.DataFrame) -> list[Finding]:
    """A row where every episode ended in an error measured nothing: it cannot pass."""
    findings = []
    if frame.empty:
        return [Finding("*", "measured", False, "the run has no results: nothing was measured")]
    # The error column only: a group of the whole frame is a copy of every column of its rows.
    keys = ["source", "adapter", "model"]
    errors = frame.groupby(keys, sort=True)["error"].agg(["all", "size"])
    for (source, adapter, model), every, size in zip(
        errors.index, errors["all"], errors["size"], strict=True
    ):
        if bool(every):
            mine = (frame["source"] == source) & (frame["adapter"] == adapter) & (frame["model"] == model)
            # The problem only: a re-record hint is printed whole on its episode's own line, and
            # half a command would not run.
            first = str(frame.loc[mine, "reason"].iloc[0]).split("; record it with: ", 1)[0]
            findings.append(
                Finding(
                    row_key(str(source), str(adapter), str(model)),
                    "measured",
                    False,
                    f"{adapter} ({model}, {source}): all {size} episodes ended in an error, nothing "
                    f"was measured (first: {first[:160]}{'...' if len(first) > 160 else ''})",
                )
            )
    return findings


def _pair(key: str, before: dict[str, str], now: dict[str, str]) -> Iterable[_Pairing]:
    shared = sorted(set(before) & set(now))
    for rate in RATES:
        worse: list[str] = []
        better: list[str] = []
        for case in shared:
            was, is_ = passed(before[case], rate), passed(now[case], rate)
            if was is None or is_ is None or was == is_:
                continue
            (worse if was else better).append(case)
        yield _Pairing(
            key=key,
            rate=rate,
            shared=len(shared),
            worse=worse,
            better=better,
            before=flag_counts((before[c] for c in shared), rate),
            after=flag_counts((now[c] for c in shared), rate),
        )


def _judge(
    pairings: list[_Pairing], tolerance: float, alpha: float, replay_problems: set[tuple[str, str]]
) -> list[Finding]:
    """Each pairing's finding. `replay_problems`: (row, case) whose episode could not replay (a
    conformance finding already says why, e.g. a case changed since it was recorded): a
    deterministic row worse only on those is not called a pipeline bug."""
    statistical = [
        p
        for p in pairings
        if split_key(p.key)[0] not in DETERMINISTIC_SOURCES
        and can_reject(len(p.worse) + len(p.better), alpha)
    ]
    adjusted = dict(
        zip(
            (id(p) for p in statistical),
            holm([mcnemar_exact(len(p.worse), len(p.better)) for p in statistical], alpha),
            strict=True,
        )
    )
    findings = []
    for pairing in pairings:
        p_value = adjusted.get(id(pairing))
        exact = split_key(pairing.key)[0] in DETERMINISTIC_SOURCES
        reasons = []
        unexplained = [case for case in pairing.worse if (pairing.key, case) not in replay_problems]
        if exact and unexplained:
            reasons.append("a deterministic (emulated) row changed: a pipeline bug")
        elif exact and pairing.worse:
            reasons.append("its recordings could not replay (the conformance lines above say why)")
        if p_value is not None and p_value < alpha and len(pairing.worse) > len(pairing.better):
            reasons.append(f"worse beyond noise (McNemar exact, Holm-adjusted p={p_value:.2g} < {alpha:g})")
        if tolerance > 0 and pairing.drop > tolerance:
            reasons.append(f"dropped by {pairing.drop:.1%}, more than --tolerance {tolerance:.1%}")
        findings.append(
            Finding(
                pairing.key,
                pairing.rate,
                not reasons,
                _message(pairing, p_value, reasons),
                worse=tuple(pairing.worse),
                better=tuple(pairing.better),
                p_value=p_value,
            )
        )
    return findings


def _message(pairing: _Pairing, p_value: float | None, reasons: list[str]) -> str:
    (k0, n0), (k1, n1) = pairing.before, pairing.after
    text = (
        f"{pairing.key} {pairing.rate}: {_rate(k0, n0)} -> {_rate(k1, n1)} on {pairing.shared} shared cases"
    )
    if pairing.worse:
        text += f"; worse: {_names(pairing.worse)}"
    if pairing.better:
        text += f"; better: {_names(pairing.better)}"
    if p_value is not None and not reasons:
        text += f" (McNemar exact, Holm-adjusted p={p_value:.2g})"
    if reasons:
        text += " — " + "; ".join(reasons)
    return text


def _rate(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k}/{n})" if n else "- (0/0)"


def _names(cases: list[str]) -> str:
    shown = ", ".join(cases[:SHOWN_CASES])
    return f"{len(cases)} [{shown}{', ...' if len(cases) > SHOWN_CASES else ''}]"


def diff_text(report: GateReport) -> str:
    lines = [f"note: {note}" for note in report.notes]
    lines.extend(f"FAIL {finding.message}" for finding in report.failures)
    changed = [f for f in report.findings if f.ok and (f.worse or f.better)]
    lines.extend(f"  ok {f.message}" for f in changed)
    if report.summary is not None:
        lines.append("compared: " + report.summary.line())
    lines.append("gate: " + verdict_line(report))
    return "\n".join(lines)


def headline(report: GateReport, shown: int = 5) -> list[str]:
    """The lines a scorecard opens with: the verdict, what it compared, what failed first."""
    lines = [f"**Verdict: {verdict_line(report)}.**"]
    if report.summary is not None:
        lines[0] += f" Compared: {report.summary.line()}."
    failures = report.failures
    if failures:
        lines += ["", *(f"- FAIL {f.message}" for f in failures[:shown])]
        if len(failures) > shown:
            lines.append(f"- ... and {len(failures) - shown} more (`xpeval gate` lists them all)")
    return lines


def verdict_line(report: GateReport) -> str:
    """`passed` or `FAILED (n problem(s))`, with what it rests on when that is not a baseline."""
    verdict = "passed" if report.passed else f"FAILED ({len(report.failures)} problem(s))"
    return f"{verdict} ({report.basis})" if report.basis else verdict


def step_summary(report: GateReport) -> str:
    lines = ["## xpeval gate: " + verdict_line(report), ""]
    if report.failures:
        lines += ["| check | detail |", "|---|---|"]
        lines += [f"| {f.metric} | {f.message.replace('|', '/')} |" for f in report.failures]
    improved = [f for f in report.findings if f.better]
    if improved:
        lines += ["", "Improvements:", ""]
        lines += [f"- {f.key} {f.metric}: {_names(list(f.better))}".replace("|", "/") for f in improved]
    if report.notes:
        lines += ["", *[f"> {note}" for note in report.notes]]
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
