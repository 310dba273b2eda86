"""The schema-acceptance scorecard as pandas tables: one row per (adapter, schema) pair, and a
per-adapter summary. Pure, except `write_report`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from evals.schema_acceptance import PairResult

EXACT_ACTIONS = frozenset({"inlined", "renamed"})
"""Loss entries that change a schema's form, not its meaning."""

PROVENANCE = (
    "Offline measurement: each adapter's dialect pass and wire produce the tool definition they "
    "would send; the acceptance checker (`evals/acceptance`) judges it against the providers' "
    "published rules (`provider-schema-rules.md`, each rule with its evidence), and the fidelity "
    "measurement (`evals/fidelity.py`, hypothesis-jsonschema instances) compares the sent schema "
    "with the original. No provider was called: these are not live provider answers."
)


def pairs_frame(rows: Iterable[PairResult]) -> pd.DataFrame:
    """One row per pair, flat (counts and rule ids instead of nested lists)."""
    records = [
        {
            "adapter": row.adapter,
            "schema": row.schema_,
            "verdict": row.verdict,
            "losses": len(row.losses),
            "loss_keywords": " ".join(sorted({str(loss.get("keyword")) for loss in row.losses})),
            "violations": len(row.violations),
            "violation_rules": " ".join(sorted({v.rule for v in row.violations})),
            "loss_rate": row.loss_rate,
            "false_rejections": row.false_rejections,
            "silent_change": _silent(row),
            "narrowed": row.narrowed,
            "seconds": row.seconds,
            "refusal": row.refusal,
            "fidelity_note": row.fidelity_note,
        }
        for row in rows
    ]
    columns = [
        "adapter", "schema", "verdict", "losses", "loss_keywords", "violations", "violation_rules",
        "loss_rate", "false_rejections", "silent_change", "narrowed", "seconds", "refusal", "fidelity_note",
    ]  # fmt: skip
    return pd.DataFrame.from_records(records, columns=columns)


def _silent(row: PairResult) -> bool:
    """A measured change of meaning (constraint loss or false rejections) that no reported loss
    other than an exact one (inlining, renaming) accounts for."""
    changed = (row.loss_rate or 0) > 0 or row.false_rejections > 0
    return changed and all(loss.get("action") in EXACT_ACTIONS for loss in row.losses)


def summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per adapter: verdict counts, pairs sent with violations, losses, fidelity figures."""
    if pairs.empty:
        return pd.DataFrame()
    sent = pairs["verdict"] != "refused"
    frame = pairs.assign(
        as_is=pairs["verdict"] == "as-is",
        rewritten=pairs["verdict"] == "rewritten",
        refused=~sent,
        sent_with_violations=sent & (pairs["violations"] > 0),
        measured=pairs["loss_rate"].notna(),
    )
    table = frame.groupby("adapter", sort=False).agg(
        pairs=("schema", "size"),
        as_is=("as_is", "sum"),
        rewritten=("rewritten", "sum"),
        refused=("refused", "sum"),
        sent_with_violations=("sent_with_violations", "sum"),
        losses=("losses", "sum"),
        mean_loss_rate=("loss_rate", "mean"),
        unmeasured=("measured", lambda m: int((~m).sum())),
        false_rejections=("false_rejections", "sum"),
        silent_changes=("silent_change", "sum"),
        narrowed=("narrowed", "sum"),
        median_seconds=("seconds", "median"),
    )
    table.loc[:, "unmeasured"] -= table["refused"]  # a refused pair has nothing to measure
    return table.reset_index()


def remaining_violations(pairs: pd.DataFrame) -> pd.DataFrame:
    """Which rules the definitions that would be sent still break, per adapter."""
    sent = pairs[(pairs["verdict"] != "refused") & (pairs["violations"] > 0)]
    if sent.empty:
        return pd.DataFrame(columns=["adapter", "rule", "pairs"])
    exploded = sent.assign(rule=sent["violation_rules"].str.split(" ")).explode("rule")
    return (
        exploded.groupby(["adapter", "rule"], sort=False)
        .size()
        .reset_index(name="pairs")
        .sort_values(["adapter", "pairs"], ascending=[True, False])
    )


def to_markdown(pairs: pd.DataFrame, corpus: str) -> str:
    table = summary(pairs)
    lines = [
        "# Schema acceptance",
        "",
        f"> {PROVENANCE}",
        "",
        f"Corpus: `{corpus}`; {pairs['schema'].nunique()} schemas x {pairs['adapter'].nunique()} adapters.",
        "",
        "`sent_with_violations`: pairs the adapter would send although a published rule refuses them "
        "(should be 0). `false_rejections`: generated calls valid under the original schema that the "
        "sent schema refuses; `narrowed`: the same, but explained by a narrowing the adapter reported; "
        "`mean_loss_rate`: share of calls valid under the sent schema that the original forbids; "
        "`silent_changes`: pairs whose measured change no reported loss accounts for (should be 0).",
        "",
        table.to_markdown(index=False, floatfmt=".3f") if not table.empty else "(no pairs)",
        "",
    ]
    remaining = remaining_violations(pairs)
    if not remaining.empty:
        lines += ["## Rules still broken by what would be sent", "", remaining.to_markdown(index=False), ""]
    return "\n".join(lines)


def write_report(pairs: pd.DataFrame, directory: Path, corpus: str) -> dict[str, Path]:
    """reports/schema_acceptance.{csv,md}."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"csv": directory / "schema_acceptance.csv", "md": directory / "schema_acceptance.md"}
    pairs.to_csv(paths["csv"], index=False)
    paths["md"].write_text(to_markdown(pairs, corpus), encoding="utf-8")
    return paths
