"""The schema-acceptance scorecard as pandas tables: one row per (adapter, schema) pair, and a
per-adapter summary. Pure, except `write_acceptance_report`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import pandas as pd

from xpeval.adapters.schema import FORM_ACTIONS, Loss
from xpeval.evals.acceptance.measure import PairResult
from xpeval.evals.acceptance.outcomes import OUTCOME_LABELS, outcome_legend

EXACT_ACTIONS: frozenset[str] = FORM_ACTIONS
"""Loss entries that change a schema's form, not its meaning."""

Outcome = Literal["refused", "loss", "validation", "guidance"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
"""What `--fail-on` can name: a refused pair (by the pass, or sent with a rule of the provider
broken, which the provider refuses); a pair sent with a loss that changes what a call may
contain (`loss`: a loss entry other than an exact one, `EXACT_ACTIONS`), or by its severity: one
that changes what a validator accepts (`validation`), or only what the model is told
(`guidance`; `adapters/schema/_types.Severity`)."""

PROVENANCE = (
    "Offline measurement: each adapter's dialect pass and wire produce the tool definition they "
    "would send; the acceptance checker (`evals/acceptance/checker`) judges it against the providers' "
    "published rules (`docs/provider-schema-rules.md`, each rule with its evidence), and the fidelity "
    "measurement (`evals/acceptance/fidelity.py`, hypothesis-jsonschema instances) compares the sent schema "
    "with the original. No provider was called: these are not live provider answers."
)


def pairs_frame(rows: Iterable[PairResult]) -> pd.DataFrame:
    """One row per pair, flat (counts and rule ids instead of nested lists). Built column by
    column as the rows come: a catalog of 10,000 tools x 12 adapters holds no record per pair."""
    columns: dict[str, list[Any]] = {name: [] for name in PAIR_COLUMNS}
    for row in rows:
        for name, value in _flat(row).items():
            columns[name].append(value)
    return pd.DataFrame(columns, columns=list(PAIR_COLUMNS))


# new columns go last: readers of the csv (notebooks/scorecard.ipynb) select by name
PAIR_COLUMNS = (
    "adapter", "schema", "verdict", "losses", "loss_keywords", "violations", "violation_rules",
    "loss_rate", "false_rejections", "silent_change", "narrowed", "seconds", "refusal", "fidelity_note",
    "lost", "lost_keywords", "tool", "source", "form",
    "validation_lost", "validation_keywords", "guidance_lost", "guidance_keywords",
    "refusal_rule", "refusal_source",
)  # fmt: skip


def _flat(row: PairResult) -> dict[str, Any]:
    return {
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
        "lost": len(_meaning_losses(row)),
        "lost_keywords": " ".join(sorted({str(loss.get("keyword")) for loss in _meaning_losses(row)})),
        "tool": row.tool,
        "source": row.source,
        "form": row.form,
        **_by_severity(row),
        "refusal_rule": row.refusal_rule,
        "refusal_source": row.refusal_source,
    }


def severity_of(loss: dict[str, Any]) -> str:
    """A reported loss's severity (read from its action and keyword when a record predates it)."""
    given = loss.get("severity")
    if isinstance(given, str):
        return given
    fields = {k: loss[k] for k in ("pointer", "keyword", "action", "detail") if k in loss}
    return Loss.model_validate({"pointer": "", "keyword": "", "action": "dropped", **fields}).severity


def _by_severity(row: PairResult) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for severity in ("validation", "guidance"):
        losses = [loss for loss in _meaning_losses(row) if severity_of(loss) == severity]
        found[f"{severity}_lost"] = len(losses)
        found[f"{severity}_keywords"] = " ".join(sorted({str(loss.get("keyword")) for loss in losses}))
    return found


def _meaning_losses(row: PairResult) -> list[dict[str, Any]]:
    """The reported losses that change what a call may contain (not only the schema's form)."""
    return [loss for loss in row.losses if loss.get("action") not in EXACT_ACTIONS]


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
        lossy_validation=sent & (pairs["validation_lost"] > 0),
        lossy_guidance_only=sent & (pairs["validation_lost"] == 0) & (pairs["guidance_lost"] > 0),
        measured=pairs["loss_rate"].notna(),
    )
    table = frame.groupby("adapter", sort=False).agg(
        pairs=("schema", "size"),
        as_is=("as_is", "sum"),
        rewritten=("rewritten", "sum"),
        refused=("refused", "sum"),
        sent_with_violations=("sent_with_violations", "sum"),
        lossy_validation=("lossy_validation", "sum"),
        lossy_guidance_only=("lossy_guidance_only", "sum"),
        losses=("losses", "sum"),
        mean_loss_rate=("loss_rate", "mean"),
        unmeasured=("measured", lambda m: int((~m).sum())),
        false_rejections=("false_rejections", "sum"),
        silent_changes=("silent_change", "sum"),
        narrowed=("narrowed", "sum"),
        median_seconds=("seconds", "median"),
    )
    table.loc[:, "unmeasured"] -= table["refused"]  # a refused pair has nothing to measure
    caps = [request_cap(str(adapter)) for adapter in table.index]
    table["tools_per_request"] = pd.Series(caps, index=table.index, dtype="object")
    sent_tools = table["pairs"] - table["refused"]
    table["requests_needed"] = [
        1 if cap is None else max(1, -(-int(count) // cap))
        for cap, count in zip(caps, sent_tools, strict=True)
    ]
    return table.reset_index()


def request_cap(adapter: str) -> int | None:
    """How many tools one request of `adapter` may carry (its dialect's documented cap,
    docs/provider-schema-rules.md §13.8); None: no cap found. Each pair is measured in a request
    of its own, so the cap is reported here, for the whole catalog."""
    from xpeval.adapters.registry import effective_contract
    from xpeval.adapters.schema.prepare import TOOL_CAPS

    return TOOL_CAPS.get(effective_contract(adapter).schema_dialect)


def over_cap(table: pd.DataFrame) -> str | None:
    """One line naming every adapter whose sent tools do not fit one request, None when all fit."""
    over = [
        f"{record.adapter} {record.requests_needed} (at most {record.tools_per_request})"
        for record in table.itertuples(index=False)
        if record.requests_needed > 1
    ]
    return "more tools than one request takes; requests needed: " + ", ".join(over) if over else None


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


def refusal_text(record: Any) -> str:
    """A refused pair's reason, the rule it follows and that rule's source."""
    reason = record.refusal if isinstance(record.refusal, str) and record.refusal else "refused"
    rule, source = getattr(record, "refusal_rule", None), getattr(record, "refusal_source", None)
    if not isinstance(rule, str) or not rule:
        return reason
    return f"{reason} [rule {rule}; {source if isinstance(source, str) and source else 'source unknown'}]"


def refusal_notes(pairs: pd.DataFrame) -> dict[str, str]:
    """Each distinct refusal (`refusal_text`) -> its note id (`R1`, `R2`, ... in order of
    appearance), so a tool x adapter cell stays short and the reason is written once."""
    notes: dict[str, str] = {}
    for record in pairs[pairs["verdict"] == "refused"].itertuples(index=False):
        notes.setdefault(refusal_text(record), f"R{len(notes) + 1}")
    return notes


def cell(record: Any, notes: dict[str, str], *, short: bool = False) -> str:
    """One tool x adapter cell. In full (Markdown): `as-is`, `rewritten: exact`, `rewritten: 3
    lost (format minimum)` or `refused (R2)`; `short` (a terminal has no room for ten adapters of
    that): `as-is`, `rewritten`, `3 lost`, `refused R2`."""
    if record.verdict == "refused":
        note = notes[refusal_text(record)]
        return f"refused {note}" if short else f"refused ({note})"
    if int(record.violations) > 0:
        # the checker says the provider refuses what would be sent: never "as-is" or "exact"
        rules = f" ({record.violation_rules})" if not short and record.violation_rules else ""
        return f"violates {int(record.violations)}" if short else f"{record.verdict}, violates{rules}"
    lost = int(record.lost)
    detail = _lost_detail(record, short=short)
    if record.verdict == "as-is":
        return "as-is" if lost == 0 else f"as-is, {detail}"
    if short:
        return detail if lost else "rewritten"
    return f"rewritten: {detail}" if lost else "rewritten: exact"


def _lost_detail(record: Any, *, short: bool) -> str:
    """`3 lost (validation: format minimum; guidance: default)`; short: `2 lost +1 guidance`
    (validation losses counted as lost, guidance ones named)."""
    lost, validation = int(record.lost), int(record.validation_lost)
    if short:
        guidance = lost - validation
        if not validation:
            return f"{guidance} guidance"
        return f"{validation} lost" + (f" +{guidance} guidance" if guidance else "")
    parts = [
        f"{severity}: {keywords}"
        for severity, keywords in (
            ("validation", record.validation_keywords),
            ("guidance", record.guidance_keywords),
        )
        if keywords
    ]
    return f"{lost} lost" + (f" ({'; '.join(parts)})" if parts else "")


def tool_matrix(pairs: pd.DataFrame, *, short: bool = False) -> tuple[pd.DataFrame, dict[str, str]]:
    """One row per tool (in the order measured), one column per adapter, each cell the pair's
    outcome (`cell`); and the refusal notes the cells point to."""
    notes = refusal_notes(pairs)
    if pairs.empty:
        return pd.DataFrame(), notes
    cells = pairs.assign(cell=[cell(record, notes, short=short) for record in pairs.itertuples(index=False)])
    matrix = cells.pivot(index="schema", columns="adapter", values="cell")
    matrix = matrix.reindex(index=pairs["schema"].unique(), columns=pairs["adapter"].unique())
    return matrix.rename_axis(index="tool", columns=None).reset_index(), notes


def failing(pairs: pd.DataFrame, outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """The pairs with one of the named outcomes (`OUTCOMES`), with the outcome named."""
    if pairs.empty or not outcomes:
        return pairs.iloc[0:0].assign(outcome=pd.Series(dtype=str))
    # a pair sent with a rule broken is one the provider refuses: it fails as refused
    refused = (pairs["verdict"] == "refused") | (pairs["violations"] > 0)
    lost = ~refused & (pairs["lost"] > 0)
    outcome = pd.Series("", index=pairs.index)
    if "guidance" in outcomes:
        outcome[~refused & (pairs["guidance_lost"] > 0)] = "guidance"
    if "validation" in outcomes:
        outcome[~refused & (pairs["validation_lost"] > 0)] = "validation"
    if "loss" in outcomes:
        outcome[lost] = "loss"
    if "refused" in outcomes:
        outcome[refused] = "refused"
    return pairs.assign(outcome=outcome)[outcome != ""]


def to_markdown(pairs: pd.DataFrame, corpus: str) -> str:
    table = summary(pairs)
    lines = [
        "# Schema acceptance",
        "",
        f"> {PROVENANCE}",
        "",
        f"Tools from `{corpus}`; {pairs['schema'].nunique()} tools x {pairs['adapter'].nunique()} adapters.",
        "",
        f"Tools per adapter: {outcome_legend()} (`violating` should be 0). "
        "`false_rejections`: generated calls valid under the original schema that the "
        "sent schema refuses; `narrowed`: the same, but explained by a narrowing the adapter reported; "
        "`mean_loss_rate`: share of calls valid under the sent schema that the original forbids; "
        "`silent_changes`: pairs whose measured change no reported loss accounts for (should be 0).",
        "",
        table.rename(columns={"pairs": "tools", **OUTCOME_LABELS}).to_markdown(index=False, floatfmt=".3f")
        if not table.empty
        else "(no pairs)",
        "",
    ]
    remaining = remaining_violations(pairs)
    if not remaining.empty:
        lines += ["## Rules still broken by what would be sent", "", remaining.to_markdown(index=False), ""]
    lines += _per_tool(pairs)
    return "\n".join(lines)


def _per_tool(pairs: pd.DataFrame) -> list[str]:
    matrix, notes = tool_matrix(pairs)
    if matrix.empty:
        return []
    lines = [
        "## Per tool",
        "",
        "`as-is`: sent unchanged; `rewritten: exact`: the form changed, not the meaning (references "
        "inlined, names or combinators renamed, properties reordered); `rewritten: N lost (severity: "
        "keywords)`: N reported "
        "losses that change what a call may contain, each `validation` (what a validator accepts: a "
        "constraint dropped, weakened or tightened) or `guidance` (only what the model is told: an "
        "annotation, a default, an implicitly open object closed); `violates (rules)`: sent although "
        "a published rule refuses it; `refused (Rn)`: not sent, for the reason below.",
        "",
        matrix.assign(tool=matrix["tool"].map(_escape)).to_markdown(index=False),
        "",
    ]
    if notes:
        lines += ["Refusals:", ""]
        lines += [f"- **{note}**: {_escape(reason)}" for reason, note in notes.items()]
        lines.append("")
    return lines


def _escape(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|")


MEASURED_COLUMNS = ("tools_from", "measured_by")
"""Written with every pair (last, after `PAIR_COLUMNS`): where the tools came from and the command
that measured them, so a reader of the csv (the HTML report) says which tools it shows."""


def write_acceptance_report(
    pairs: pd.DataFrame, directory: Path, corpus: str, *, measured_by: str
) -> dict[str, Path]:
    """reports/schema_acceptance.{csv,md}: `corpus` says where the tools came from, `measured_by`
    the command that measured them (both written into every csv row)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"csv": directory / "schema_acceptance.csv", "md": directory / "schema_acceptance.md"}
    pairs.assign(tools_from=corpus, measured_by=measured_by).to_csv(paths["csv"], index=False)
    paths["md"].write_text(to_markdown(pairs, corpus), encoding="utf-8")
    return paths
