"""Rows judged against a reference row on the same cases (pure): is this vendor serving the model
the way the reference (say, the model's official API) does? docs/reference-runs.md defines it.

Per episode shared by a row and the reference (same case, same trial), where the reference
answered without an error:

- **trigger**: did the episode return at least one tool call. Against the reference: TP both
  called, FP only the row, FN only the reference, TN neither. An episode of the row that ended
  in an error is none of these (it returned nothing to judge, so it is never a negative): it is
  counted apart (`row_errors`), left out of every count and test, and fails the row.
  Precision TP/(TP+FP), recall TP/(TP+FN), F1 their harmonic mean; Wilson intervals for
  precision and recall, a percentile bootstrap over episodes for F1.
- **agreement**: the row made the same calls as the reference, by the scorer's matching
  (`xpeval.evals.verdict.scoring.score_turn` with the reference's calls as the expected ones:
  same tools, any order, string values compared as BFCL normalizes them; no call on both sides
  agrees). An episode whose reference call has unparseable arguments is not judged.
- **paired tests** (exact McNemar on the discordant episodes, `paired_test`): trigger (FN vs FP:
  does the row call tools more or less often than the reference on the same requests: either
  way is a difference), and, where both sides have the verdict, `schema_valid` and accuracy (worse
  only). Holm holds the family-wise error across every row and test (`judge`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xpeval.adapters.schema.safe_json import nesting_depth
from xpeval.evals.results.answers import Answer
from xpeval.evals.verdict.paired_test import ALPHA, can_reject, holm, mcnemar_exact

if TYPE_CHECKING:
    from xpeval.evals.cases.model import Case
    from xpeval.evals.verdict.gate import Finding

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261201
"""Fixed: the same results give the same interval on every machine."""
MAX_ARGUMENT_DEPTH = 64
"""Deepest arguments compared (the scorer's value matching recurses)."""
SHOWN = 8


@dataclass(frozen=True)
class Comparison:
    """One row against the reference row, on the episodes both have."""

    key: str
    reference: str
    shared: int
    """Episodes both rows have and the reference answered without an error."""
    reference_errors: int
    """Shared episodes left out because the reference ended in an error."""
    only_row: int
    """Episodes of the row that the reference does not have (not compared)."""
    tp: int
    fp: int
    fn: int
    tn: int
    agreed: int
    judged: int
    """Episodes judged for agreement (the reference's calls parse)."""
    row_errors: int
    """Episodes the reference answered and the row ended in an error: left out of every count
    (an error is never a negative), and any one fails the row."""
    schema_valid: tuple[int, int]
    """The row's (valid, judged) on the shared episodes."""
    reference_schema_valid: tuple[int, int]
    f1_interval: tuple[float, float]
    tests: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per paired test, the discordant counts (row worse, row better); for `trigger`, (FN, FP)."""
    errored: tuple[str, ...] = ()
    """Episodes the reference answered and the row ended in an error."""
    missed: tuple[str, ...] = ()
    """Episodes where the reference called a tool and the row did not (FN)."""
    extra: tuple[str, ...] = ()
    """Episodes where the row called a tool and the reference did not (FP)."""
    disagreed: tuple[str, ...] = ()

    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def agreement(self) -> float:
        return _ratio(self.agreed, self.judged)


def compare_rows(
    key: str,
    row: Mapping[str, Answer],
    reference_key: str,
    reference: Mapping[str, Answer],
    cases: Mapping[str, Case],
) -> Comparison:
    """The row against the reference on their shared episodes (episode id -> answer; `cases` by
    case id, for the tools the scorer matches arguments against)."""
    both = sorted(set(row) & set(reference))
    answered = [episode for episode in both if not reference[episode].error]
    # An episode of the row that ended in an error returned nothing to judge: never a true (or
    # false) negative, it is counted apart and fails the row (`_failures`).
    judged_episodes = [episode for episode in answered if not row[episode].error]
    mine = [row[e].triggered for e in judged_episodes]
    theirs = [reference[e].triggered for e in judged_episodes]
    cells: dict[tuple[bool, bool], list[str]] = {(m, t): [] for m in (True, False) for t in (True, False)}
    for episode, m, t in zip(judged_episodes, mine, theirs, strict=True):
        cells[(m, t)].append(episode)
    verdicts = {e: _agrees(row[e], reference[e], cases.get(e.split("@", 1)[0])) for e in judged_episodes}
    judged = [e for e, verdict in verdicts.items() if verdict is not None]
    missed, extra = cells[(False, True)], cells[(True, False)]
    errored = [e for e in answered if row[e].error]
    return Comparison(
        key=key,
        reference=reference_key,
        shared=len(answered),
        reference_errors=len(both) - len(answered),
        only_row=len(set(row) - set(reference)),
        tp=len(cells[(True, True)]),
        fp=len(extra),
        fn=len(missed),
        tn=len(cells[(False, False)]),
        agreed=sum(1 for e in judged if verdicts[e]),
        judged=len(judged),
        row_errors=len(errored),
        schema_valid=_valid(row, judged_episodes),
        reference_schema_valid=_valid(reference, judged_episodes),
        f1_interval=f1_bootstrap(mine, theirs),
        tests={
            "trigger": (len(missed), len(extra)),
            "schema_valid": _discordant(row, reference, judged_episodes, "schema_valid"),
            "accuracy": _discordant(row, reference, judged_episodes, "correct"),
        },
        errored=tuple(errored),
        missed=tuple(missed),
        extra=tuple(extra),
        disagreed=tuple(e for e in judged if not verdicts[e]),
    )


def _agrees(mine: Answer, theirs: Answer, case: Case | None) -> bool | None:
    """Whether `mine` made the reference's calls, turn by turn; None when it cannot be judged."""
    from xpeval.evals.cases.model import Expected, ExpectedCall
    from xpeval.evals.verdict.scoring import score_turn

    if case is None or any(call.get("parse_error") for turn in theirs.calls for call in turn):
        return None
    if any(
        nesting_depth(call.get("arguments")) > MAX_ARGUMENT_DEPTH
        for a in (mine, theirs)
        for t in a.calls
        for call in t
    ):
        return None
    turns = max(len(mine.calls), len(theirs.calls), 1)
    for index in range(turns):
        wanted = theirs.calls[index] if index < len(theirs.calls) else ()
        given = mine.calls[index] if index < len(mine.calls) else ()
        expected = (
            Expected(calls=[ExpectedCall(name=str(c["name"]), arguments=_alternatives(c)) for c in wanted])
            if wanted
            else Expected(no_call=True)
        )
        if not score_turn(case, expected, list(given), index=index).correct:
            return False
    return True


def _alternatives(call: Mapping[str, Any]) -> dict[str, list[Any]]:
    """A reference call's arguments in the acceptable-values form: each value its only alternative."""
    return {str(name): [_alternative(value)] for name, value in (call.get("arguments") or {}).items()}


def _alternative(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): [_alternative(v)] for k, v in value.items()}
    if isinstance(value, list):
        return [_alternative(v) for v in value]
    return value


def _discordant(
    row: Mapping[str, Answer], reference: Mapping[str, Answer], episodes: Sequence[str], verdict: str
) -> tuple[int, int]:
    """(row worse, row better) on the episodes where both sides have the verdict."""
    worse = better = 0
    for episode in episodes:
        mine, theirs = getattr(row[episode], verdict), getattr(reference[episode], verdict)
        if mine is None or theirs is None or mine == theirs:
            continue
        worse += bool(theirs)
        better += bool(mine)
    return worse, better


def _valid(answers: Mapping[str, Answer], episodes: Sequence[str]) -> tuple[int, int]:
    verdicts = [answers[e].schema_valid for e in episodes if answers[e].schema_valid is not None]
    return sum(1 for v in verdicts if v), len(verdicts)


def f1_bootstrap(mine: Sequence[bool], theirs: Sequence[bool]) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the trigger F1, resampling episodes (pairs kept
    together); resamples where F1 is undefined (no call on either side) are left out.

    Hand-written on numpy: scipy.stats.bootstrap gives no interval as soon as one resample's F1
    is undefined, which a row with few calls always meets."""
    import numpy as np

    if len(mine) < 2:
        return (math.nan, math.nan)
    rows = np.asarray(mine, dtype=bool)
    refs = np.asarray(theirs, dtype=bool)
    picks = np.random.default_rng(BOOTSTRAP_SEED).integers(
        0, len(rows), size=(BOOTSTRAP_RESAMPLES, len(rows))
    )
    m, t = rows[picks], refs[picks]
    tp = (m & t).sum(axis=1)
    scored = 2 * tp + (m & ~t).sum(axis=1) + (~m & t).sum(axis=1)
    defined = scored > 0
    if not defined.any():
        return (math.nan, math.nan)
    f1 = 2 * tp[defined] / scored[defined]
    low, high = np.percentile(f1, [2.5, 97.5])
    return (float(low), float(high))


@dataclass(frozen=True)
class Verdict:
    """A row's verdict against the reference: each reason it fails (none: it passes)."""

    comparison: Comparison
    p_values: dict[str, float]
    """Holm-adjusted p per paired test that entered the family."""
    failures: tuple[str, ...]
    """Why the row fails, each one sentence about the row against the reference."""

    @property
    def passed(self) -> bool:
        return not self.failures


def judge(
    comparisons: Sequence[Comparison],
    *,
    alpha: float = ALPHA,
    min_f1: float | None = None,
    min_agreement: float | None = None,
) -> list[Verdict]:
    """Each row's verdict: it fails when it measured nothing against the reference, when a
    paired test finds it differs beyond noise (trigger: either way; schema_valid and accuracy:
    worse; Holm across every row and test, Tarone's refinement as the gate does), or when its
    F1 or agreement is below a floor the caller set."""
    family = [
        (c.key, test, counts)
        for c in comparisons
        for test, counts in sorted(c.tests.items())
        if can_reject(sum(counts), alpha)
    ]
    adjusted = holm([mcnemar_exact(*counts) for _, _, counts in family], alpha)
    p_by_row: dict[str, dict[str, float]] = {}
    for (key, test, _), p in zip(family, adjusted, strict=True):
        p_by_row.setdefault(key, {})[test] = p
    verdicts = []
    for c in comparisons:
        p_values = p_by_row.get(c.key, {})
        failures = _failures(c, p_values, alpha, min_f1, min_agreement)
        verdicts.append(Verdict(c, p_values, tuple(failures)))
    return verdicts


def _failures(
    c: Comparison,
    p_values: Mapping[str, float],
    alpha: float,
    min_f1: float | None,
    min_agreement: float | None,
) -> list[str]:
    if c.shared == 0:
        return ["no episode shared with the reference (nothing was compared)"]
    failures = []
    if c.row_errors:
        failures.append(
            f"{c.row_errors} of {c.shared} requests the reference answered ended in an error "
            f"({', '.join(c.errored[:3])}{', ...' if c.row_errors > 3 else ''}): what it would have "
            "answered cannot be told"
        )
    for test, p in sorted(p_values.items()):
        worse, better = c.tests[test]
        if p >= alpha or (test != "trigger" and worse <= better):
            continue
        if test == "trigger":
            what = (
                f"calls a tool less often ({worse} missed, {better} extra)"
                if worse > better
                else (f"calls a tool more often ({better} extra, {worse} missed)")
            )
        else:
            what = f"{test} worse on {worse} episodes, better on {better}"
        failures.append(f"{what} than the reference (McNemar exact, Holm-adjusted p={p:.2g} < {alpha:g})")
    if min_f1 is not None and not c.f1 >= min_f1:
        failures.append(f"trigger F1 {_pct(c.f1)} below --min-f1 {min_f1:.0%}")
    if min_agreement is not None and not c.agreement >= min_agreement:
        failures.append(f"agreement {_pct(c.agreement)} below --min-agreement {min_agreement:.0%}")
    return failures


def _ratio(k: int, n: int) -> float:
    return k / n if n else math.nan


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"


__all__ = [
    "Answer",
    "Comparison",
    "Verdict",
    "VerifierCounts",
    "compare_rows",
    "f1_bootstrap",
    "gate_findings",
    "judge",
    "verifier_counts",
    "verifier_markdown",
]


def gate_findings(verdicts: Sequence[Verdict]) -> list[Finding]:
    """The verdicts as the gate's findings (`xpeval gate --reference`): one per row, failing with
    each reason, or passing with its figures."""
    from xpeval.evals.verdict.gate import Finding

    findings = []
    for verdict in verdicts:
        c = verdict.comparison
        figures = (
            f"{c.key} against {c.reference}: {c.shared} episodes, trigger F1 {_pct(c.f1)}, "
            f"agreement {_pct(c.agreement)} ({c.agreed}/{c.judged})"
        )
        findings.append(
            Finding(
                c.key,
                "reference",
                verdict.passed,
                f"{c.key} against {c.reference}: " + "; ".join(verdict.failures)
                if verdict.failures
                else figures,
                worse=(*c.errored, *c.missed, *c.disagreed)[:SHOWN] if verdict.failures else (),
                p_value=verdict.p_values.get("trigger"),
            )
        )
    return findings


@dataclass(frozen=True)
class VerifierCounts:
    """A row's figures as the K2 Vendor Verifier's table states them (docs/reference-runs.md,
    "Two definitions"): its `count_finish_reason_tool_calls`, `count_successful_tool_call` and
    `schema_accuracy`, and the trigger cells its `tool_call_f1` is made of."""

    tool_calls: int
    """Episodes that triggered: answered without an error, with at least one call."""
    successful: int
    """Of those, the ones whose every call is valid for its tool's schema (`schema_valid` true:
    a call with unparseable or empty arguments, or one xpeval could not judge, is not)."""
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def schema_accuracy(self) -> float:
        return _ratio(self.successful, self.tool_calls)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)


def verifier_counts(row: Mapping[str, Answer], reference: Mapping[str, Answer]) -> VerifierCounts:
    """The verifier's figures of `row` against `reference` (episode id -> answer), with the
    verifier's definitions: a request that failed, on either side, did not trigger (the verifier
    files its missing finish reason among "others"), so a pair whose reference failed counts as
    FP or TN, where `compare_rows` leaves it out; the trigger cells cover the episodes both have.
    `arguments: ""` needs no rule here: the wires that carry argument text read it as a parse
    error, so such a call is neither valid nor, on its own, a different trigger."""
    triggered = [episode for episode, answer in row.items() if answer.triggered]
    cells = {(m, t): 0 for m in (True, False) for t in (True, False)}
    for episode in set(row) & set(reference):
        cells[(row[episode].triggered, reference[episode].triggered)] += 1
    return VerifierCounts(
        tool_calls=len(triggered),
        successful=sum(1 for episode in triggered if row[episode].schema_valid is True),
        tp=cells[(True, True)],
        fp=cells[(True, False)],
        fn=cells[(False, True)],
        tn=cells[(False, False)],
    )


def verifier_markdown(
    reference_key: str, reference: Mapping[str, Answer], rows: Mapping[str, Mapping[str, Answer]]
) -> str:
    """The verifier's table (its columns, its definitions: `verifier_counts`), the reference
    row first, as `xpeval compare --verifier` prints it."""
    lines = [
        "| row | count_finish_reason_tool_calls | count_successful_tool_call | schema_accuracy "
        "| TP/FP/FN/TN | tool_call_f1 |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for key, answers in {reference_key: reference, **rows}.items():
        c = verifier_counts(answers, reference)
        f1 = "-" if key == reference_key else _percent(c.f1)
        lines.append(
            f"| {key} | {c.tool_calls} | {c.successful} | {_percent(c.schema_accuracy)} "
            f"| {c.tp}/{c.fp}/{c.fn}/{c.tn} | {f1} |"
        )
    return "\n".join(lines) + "\n"


def _percent(value: float) -> str:
    """As the verifier prints a rate: two decimals."""
    return "-" if math.isnan(value) else f"{value:.2%}"
