"""The vendor table: each row against the reference row (`xpeval.evals.verdict.reference`), as a
tidy frame, Markdown (the README's and `xpeval compare`'s) and HTML (the report's section)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path

import pandas as pd

from xpeval.evals.cases.model import Case
from xpeval.evals.results.answers import load_reference_run
from xpeval.evals.verdict.paired_test import ALPHA
from xpeval.evals.verdict.reference import Verdict, compare_rows, judge
from xpeval.evals.verdict.scorecard import wilson

COLUMNS = [
    "source", "adapter", "model", "reference", "shared", "tp", "fp", "fn", "tn",
    "precision", "precision_lo", "precision_hi", "recall", "recall_lo", "recall_hi",
    "f1", "f1_lo", "f1_hi", "agreed", "judged", "agreement", "agreement_lo", "agreement_hi",
    "schema_valid_k", "schema_valid_n", "reference_schema_valid_k", "reference_schema_valid_n",
    "p_trigger", "p_schema_valid", "p_accuracy", "row_errors", "reference_errors", "not_in_reference",
    "passed", "failures",
]  # fmt: skip
"""One row per judged row; p values are Holm-adjusted, blank where the test could not reject."""


def vendor_frame(verdicts: Sequence[Verdict]) -> pd.DataFrame:
    records = []
    for verdict in verdicts:
        c = verdict.comparison
        source, adapter, model = [*c.key.split("|", 2), "", ""][:3]
        precision, recall = wilson(c.tp, c.tp + c.fp), wilson(c.tp, c.tp + c.fn)
        agreement = wilson(c.agreed, c.judged)
        records.append(
            {
                "source": source,
                "adapter": adapter,
                "model": model,
                "reference": "=".join(c.reference.split("|", 2)[1:]),
                "shared": c.shared,
                "tp": c.tp,
                "fp": c.fp,
                "fn": c.fn,
                "tn": c.tn,
                "precision": c.precision,
                "precision_lo": precision[0],
                "precision_hi": precision[1],
                "recall": c.recall,
                "recall_lo": recall[0],
                "recall_hi": recall[1],
                "f1": c.f1,
                "f1_lo": c.f1_interval[0],
                "f1_hi": c.f1_interval[1],
                "agreed": c.agreed,
                "judged": c.judged,
                "agreement": c.agreement,
                "agreement_lo": agreement[0],
                "agreement_hi": agreement[1],
                "schema_valid_k": c.schema_valid[0],
                "schema_valid_n": c.schema_valid[1],
                "reference_schema_valid_k": c.reference_schema_valid[0],
                "reference_schema_valid_n": c.reference_schema_valid[1],
                "p_trigger": verdict.p_values.get("trigger", math.nan),
                "p_schema_valid": verdict.p_values.get("schema_valid", math.nan),
                "p_accuracy": verdict.p_values.get("accuracy", math.nan),
                "row_errors": c.row_errors,
                "reference_errors": c.reference_errors,
                "not_in_reference": c.only_row,
                "passed": verdict.passed,
                "failures": "; ".join(verdict.failures),
            }
        )
    return pd.DataFrame.from_records(records, columns=COLUMNS)


def _pct(value: float, low: float, high: float) -> str:
    if math.isnan(value):
        return "-"
    bounds = "" if math.isnan(low) else f" [{low:.0%}, {high:.0%}]"
    return f"{value:.0%}{bounds}"


def _share(k: int, n: int) -> str:
    return f"{k / n:.0%} ({k}/{n})" if n else "-"


def _p(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2g}"


HEADERS = [
    "source", "vendor (adapter)", "model", "n", "TP/FP/FN/TN", "trigger precision", "trigger recall",
    "trigger F1", "agreement", "schema valid", "reference schema valid", "paired p (trigger)", "verdict",
]  # fmt: skip


def _errors(count: int) -> str:
    """An errored episode is none of TP/FP/FN/TN: said beside them."""
    return f", {count} errors" if count else ""


def _cells(r: pd.Series) -> list[str]:
    return [
        str(r["source"]),
        str(r["adapter"]),
        str(r["model"]),
        str(r["shared"]),
        f"{r['tp']}/{r['fp']}/{r['fn']}/{r['tn']}" + _errors(int(r["row_errors"])),
        _pct(r["precision"], r["precision_lo"], r["precision_hi"]),
        _pct(r["recall"], r["recall_lo"], r["recall_hi"]),
        _pct(r["f1"], r["f1_lo"], r["f1_hi"]),
        _pct(r["agreement"], r["agreement_lo"], r["agreement_hi"]),
        _share(int(r["schema_valid_k"]), int(r["schema_valid_n"])),
        _share(int(r["reference_schema_valid_k"]), int(r["reference_schema_valid_n"])),
        _p(r["p_trigger"]),
        "pass" if r["passed"] else "FAIL",
    ]


def vendor_markdown(frame: pd.DataFrame) -> str:
    """The table, with what it rests on said once above it."""
    references = ", ".join(sorted(set(frame["reference"]))) or "-"
    lines = [
        f"Against the reference {references}, on the episodes both answered. Trigger: did the episode "
        "return a tool call (TP both, FP only this row, FN only the reference; an episode this row "
        "ended in an error is none of these: counted as an error, and it fails the row). Precision and "
        "recall with Wilson 95 % intervals, F1 with a bootstrap 95 % interval over episodes; agreement: "
        "the same calls by the scorer's matching; schema valid: episodes whose every call validates "
        "against its tool's schema, of those that returned a call; paired p: exact McNemar on FN vs FP, "
        "Holm-adjusted (docs/reference-runs.md).",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join(["---"] * 3 + ["---:"] + ["---"] * (len(HEADERS) - 4)) + "|",
    ]
    lines += ["| " + " | ".join(_cells(r)) + " |" for _, r in frame.iterrows()]
    failed = frame[frame["failures"].astype(bool)]
    if not failed.empty:
        lines += [
            "",
            *[f"- FAIL {r.adapter} ({r.model}, {r.source}): {r.failures}" for r in failed.itertuples()],
        ]
    return "\n".join(lines) + "\n"


def vendor_html(frame: pd.DataFrame) -> str:
    """The report's section: the same table, each cell escaped."""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADERS)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in _cells(r)) + "</tr>"
        for _, r in frame.iterrows()
    )
    references = escape(", ".join(sorted(set(frame["reference"]))) or "-")
    return (
        f'<p class="note">Each row against the reference {references} on the episodes both answered: '
        "whether it called a tool when the reference did (precision, recall, F1), the same calls "
        "(agreement), valid arguments, and the exact paired test on the trigger "
        f"(docs/reference-runs.md).</p><table><tr>{head}</tr>{body}</table>"
    )


def vendor_verdicts(
    results: Path,
    reference: str,
    cases: Iterable[Case],
    *,
    against: Path | None = None,
    alpha: float = ALPHA,
    min_f1: float | None = None,
    min_agreement: float | None = None,
) -> list[Verdict]:
    """Every row of `results` judged against the reference row `ADAPTER=MODEL` (of `against`, or
    of `results` itself) on `cases` (the run's case set, `xpeval.evals.report.html.run_cases`): what
    `xpeval compare` prints and `xpeval gate --reference` gates on."""
    run = load_reference_run(results, reference, against)
    by_id = {case.id: case for case in cases}
    found = [
        compare_rows(key, answers, run.reference_key, run.reference, by_id)
        for key, answers in sorted(run.rows.items())
    ]
    return judge(found, alpha=alpha, min_f1=min_f1, min_agreement=min_agreement)
