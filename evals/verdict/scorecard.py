"""Per-provider scorecards as pandas tables (pure), with Wilson 95 % intervals.

One row per (source, adapter, model): how often the model picked the right tools, got the
arguments right, refused correctly when no tool applies, produced malformed calls, or hit
errors; latency and tokens. Rows are grouped by source, because an emulated row measures the
pipeline, never a provider: the table says so in the row itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
from scipy.special import ndtri

from xpeval.evals.results.file import final_results
from xpeval.evals.results.rows import ResultRow

KEY = ["source", "adapter", "model"]
SOURCE_ORDER = ["live", "cassette", "local-model", "emulated"]
SOURCE_NOTES = {
    "live": "measured live against the provider",
    "cassette": "replayed from a live recording (model and date shown)",
    "local-model": "a real local model via llama.cpp (named in the row), not a hosted provider",
    "emulated": "EMULATED: checks the adapter pipeline only; says nothing about any provider's quality",
}
_Z95 = float(-ndtri(0.025))
"""The normal quantile of a two-sided 95 % interval, as `scipy.stats.norm.isf(0.025)` gives it."""
RATES = ["accuracy", "tool_selection", "arguments", "irrelevance", "malformed", "errors", "schema_valid"]
"""Every rate, in the order the baseline's per-case codes store them (`xpeval.evals.verdict.baseline`):
a new rate goes at the end."""


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95 % interval for a proportion; (nan, nan) with no trials.

    statsmodels' `proportion_confint(method="wilson")` formula, operation for operation, with
    the normal quantile from `scipy.special.ndtri` (what its `stats.norm.isf` computes): the
    same bits, without importing statsmodels and scipy.stats (1.0 s of CPU per run, most of it
    spent before the first episode; `tests/runner/test_scorecard.py` pins the equality).
    """
    if n <= 0:
        return (math.nan, math.nan)
    z = _Z95
    rate, z2 = successes / n, z**2
    denominator = 1 + z2 / n
    centre = (rate + z2 / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1.0 - rate) / n + z2 / (4.0 * n**2)) / denominator
    # At k = 0 or k = n the bound is exactly 0 or 1; floating point would leave it a hair off.
    low = 0.0 if successes == 0 else min(max(centre - half, 0.0), 1.0)
    high = 1.0 if successes == n else min(max(centre + half, 0.0), 1.0)
    return (low, high)


def results_frame(rows: Iterable[ResultRow]) -> pd.DataFrame:
    """Final attempts as a tidy table (one row per episode)."""
    records = []
    for row in final_results(rows):
        records.append(
            {
                "run": row.run,
                "case_id": row.case_id,
                "trial": row.trial,
                "category": row.category,
                "adapter": row.adapter,
                "wire": row.wire,
                "model": row.model,
                "source": row.source,
                "recorded_at": row.recorded_at,
                "attempts": row.attempt,
                "correct": row.correct,
                "tool_selection_correct": row.tool_selection_correct,
                "arguments_correct": row.arguments_correct,
                "irrelevance": row.irrelevance,
                "malformed": row.malformed,
                "schema_valid": row.schema_valid,
                "error": row.error_kind is not None,
                "error_kind": row.error_kind,
                "error_type": row.error_type,
                "reason": row.reason,
                "latency_s": row.latency_s,
                "input_tokens": row.input_tokens,
                "output_tokens": row.output_tokens,
                "cost_usd": row.cost_usd,
                "steps": row.steps,
            }
        )
    columns = [
        "run",
        "case_id",
        "trial",
        "category",
        "adapter",
        "wire",
        "model",
        "source",
        "recorded_at",
        "attempts",
        "correct",
        "tool_selection_correct",
        "arguments_correct",
        "irrelevance",
        "malformed",
        "schema_valid",
        "error",
        "error_kind",
        "error_type",
        "reason",
        "latency_s",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "steps",
    ]
    return pd.DataFrame.from_records(records, columns=columns)


def _counts(group: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """(successes, trials) per rate."""
    labelled = group["correct"].dropna()  # an unlabelled case is judged against a reference only
    selection = group["tool_selection_correct"].dropna()
    judged = group["arguments_correct"].dropna()
    valid = group["schema_valid"].dropna()
    irrelevance = group.loc[group["irrelevance"].astype(bool), "correct"].dropna()
    return {
        "accuracy": (int(labelled.astype(bool).sum()), len(labelled)),
        "tool_selection": (int(selection.astype(bool).sum()), len(selection)),
        "arguments": (int(judged.astype(bool).sum()), len(judged)),
        "irrelevance": (int(irrelevance.astype(bool).sum()), len(irrelevance)),
        "malformed": (int(group["malformed"].sum()), len(group)),
        "errors": (int(group["error"].sum()), len(group)),
        "schema_valid": (int(valid.astype(bool).sum()), len(valid)),
    }


REFUSED_TOOLS = " cannot send these tools: "
"""What an adapter's refused turn says (`adapters/adapter.py`): `<adapter> cannot send these tools:
<tool>: <why>; <tool>: <why>`."""
_REFUSED_TOOL = re.compile(r"(?:^|; )([\w.-]+): ")


def _refused_names(reason: str) -> list[str]:
    _, _, listed = reason.partition(REFUSED_TOOLS)
    return _REFUSED_TOOL.findall(listed)


def refusal_explanations(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """(source, line) for each row some of whose episodes were never sent because the adapter
    refuses a tool's schema: its accuracy, how many episodes and which tools, so a row below
    100 % (an emulated one above all: a perfect model answers it) says why."""
    refused = frame[
        (frame["error_kind"] == "refused")
        & frame["reason"].astype(str).str.contains(REFUSED_TOOLS, regex=False)
    ]
    lines: list[tuple[str, str]] = []
    for (source, adapter, model), group in refused.groupby(KEY, sort=False):
        row = frame[(frame["source"] == source) & (frame["adapter"] == adapter) & (frame["model"] == model)]
        correct, labelled = _counts(row)["accuracy"]
        tools = sorted({name for reason in group["reason"].astype(str) for name in _refused_names(reason)})
        rate = f"{100 * correct / labelled:.0f} %" if labelled else "-"
        lines.append(
            (
                str(source),
                f"{source}|{adapter}|{model}: {rate} — {len(group)} of {len(row)} episode(s) not sent: "
                f"{len(tools)} tool(s) refused by {adapter}'s schema rules: {', '.join(tools)} "
                f"(`xpeval schemas --adapters {adapter}` says why)",
            )
        )
    return lines


def _summary(group: pd.DataFrame) -> dict[str, object]:
    out: dict[str, object] = {"n": len(group)}
    for rate, (k, n) in _counts(group).items():
        low, high = wilson(k, n)
        out[f"{rate}_k"], out[f"{rate}_n"] = k, n
        out[rate] = k / n if n else math.nan
        out[f"{rate}_lo"], out[f"{rate}_hi"] = low, high
    # A replayed episode's time is the replay's, not the provider's: only rows answered now count.
    latency = group.loc[group["recorded_at"].isna(), "latency_s"].dropna()
    out["latency_p50_s"] = float(latency.quantile(0.5)) if len(latency) else math.nan
    out["latency_p95_s"] = float(latency.quantile(0.95)) if len(latency) else math.nan
    out["input_tokens_mean"] = (
        float(group["input_tokens"].dropna().mean()) if group["input_tokens"].notna().any() else math.nan
    )
    out["output_tokens_mean"] = (
        float(group["output_tokens"].dropna().mean()) if group["output_tokens"].notna().any() else math.nan
    )
    costs = group["cost_usd"].dropna() if "cost_usd" in group else pd.Series(dtype=float)
    # Blank unless every episode has a price: a partial sum would understate the cost.
    total = float(costs.sum()) if len(costs) and len(costs) == len(group) else math.nan
    out["cost_usd"] = total
    out["cost_per_episode_usd"] = total / len(group) if len(group) else math.nan
    recorded = group["recorded_at"].dropna()
    out["recorded"] = f"{min(recorded)[:10]}..{max(recorded)[:10]}" if len(recorded) else ""
    out.update(_trials(group))
    return out


def _trials(group: pd.DataFrame) -> dict[str, object]:
    """Repeated trials (`--repeat N`): pass@1 (the mean per-case pass rate) with a 95 % interval
    over cases, not over trials (a case's trials are not independent); pass^N (every trial
    passed) with its Wilson interval over cases; how many cases are flaky (some trials pass)."""
    # Most runs are one trial per case: counted first, the per-case table only when it is needed
    # (it was 1.3 % of the default replay's CPU, for 153 groups of one trial each).
    per_case_count = group.loc[group["correct"].notna(), "case_id"].value_counts()
    trials = int(per_case_count.max()) if len(per_case_count) else 0
    out: dict[str, object] = {"trials": trials}
    if trials < 2:
        return out
    labelled = group[group["correct"].notna()].astype({"correct": bool})
    per_case = labelled.groupby("case_id")["correct"].agg(["mean", "size", "sum"])
    from statsmodels.stats.weightstats import DescrStatsW

    rates = per_case["mean"].astype(float)
    mean = float(rates.mean())
    low, high = (mean, mean) if rates.nunique() == 1 else DescrStatsW(rates.to_numpy()).tconfint_mean(0.05)
    all_passed = int((per_case["sum"] == per_case["size"]).sum())
    out.update(
        pass_at_1=mean,
        pass_at_1_lo=max(0.0, float(low)),
        pass_at_1_hi=min(1.0, float(high)),
        pass_all=all_passed / len(per_case),
        flaky=int(((per_case["sum"] > 0) & (per_case["sum"] < per_case["size"])).sum()),
    )
    out["pass_all_lo"], out["pass_all_hi"] = wilson(all_passed, len(per_case))
    return out


def flaky_cases(frame: pd.DataFrame) -> pd.DataFrame:
    """The cases whose repeated trials disagree: some passed, some did not."""
    columns = [*KEY, "case_id", "passed", "trials"]
    if frame.empty or "trial" not in frame or frame["trial"].max() < 1:
        return pd.DataFrame(columns=columns)
    labelled = frame[frame["correct"].notna()].astype({"correct": bool})
    counts = labelled.groupby([*KEY, "case_id"], observed=True)["correct"].agg(passed="sum", trials="size")
    counts = counts.reset_index()
    return counts[(counts["passed"] > 0) & (counts["passed"] < counts["trials"])][columns].reset_index(
        drop=True
    )


def _grouped(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "n"])
    rows = [
        {**dict(zip(keys, name if isinstance(name, tuple) else (name,), strict=True)), **_summary(group)}
        for name, group in frame.groupby(keys, sort=False, dropna=False)
    ]
    table = pd.DataFrame(rows)
    table["source"] = pd.Categorical(table["source"], categories=SOURCE_ORDER, ordered=True)
    table["note"] = table["source"].map(SOURCE_NOTES).astype(str)
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def scorecard(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (source, adapter, model)."""
    return _grouped(frame, KEY)


def by_category(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (source, adapter, model, category)."""
    return _grouped(frame, [*KEY, "category"])


def _pct(value: object, low: object, high: object) -> str:
    if not isinstance(value, float) or math.isnan(value):
        return "-"
    return f"{value:.0%} [{low:.0%}, {high:.0%}]"


def _dollars(value: float) -> str:
    """A run's cost, blank ('-') where any price is unknown: never guessed."""
    return "-" if not isinstance(value, float) or math.isnan(value) else f"{value:.4f}"


def _seconds(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def to_markdown(
    card: pd.DataFrame,
    categories: pd.DataFrame,
    headline: Sequence[str] = (),
    tasks: pd.DataFrame | None = None,
    explanations: Sequence[tuple[str, str]] = (),
) -> str:
    """The scorecard as markdown; `headline`: lines said first (the run's verdict, what changed);
    `tasks`: the task cases' pass^k (`xpeval.evals.verdict.pass_hat_k`), a section of its own;
    `explanations`: (source, line) said under that source's table (`refusal_explanations`)."""
    lines = [
        "# Tool-calling scorecard",
        "",
        *([*headline, ""] if headline else []),
        "Rates with Wilson 95 % intervals. Every row names its source; read each section's note before "
        "comparing numbers across sections. p50/p95 s: seconds per episode measured in this run; "
        "`-` where every episode was replayed from a recording (a replay's time says nothing about "
        "the model).",
        "",
    ]
    for source in SOURCE_ORDER:
        part = card[card["source"] == source]
        if part.empty:
            continue
        lines += [
            f"## {source}",
            "",
            f"> {SOURCE_NOTES[source]}",
            "",
            "| source | adapter | model | n | accuracy | tool selection | arguments | irrelevance | "
            "malformed | errors | schema valid | p50 s | p95 s | tokens in/out | cost $ | recorded |",
            "|---|---|---|---:|---|---|---|---|---|---|---|---:|---:|---|---:|---|",
        ]
        for _, r in part.iterrows():
            label = "EMULATED (pipeline only)" if source == "emulated" else source
            tokens = (
                "-"
                if math.isnan(r["input_tokens_mean"])
                else f"{r['input_tokens_mean']:.0f}/{r['output_tokens_mean']:.0f}"
            )
            lines.append(
                f"| {label} | {r['adapter']} | {r['model']} | {r['n']} | "
                + " | ".join(_pct(r[m], r[f"{m}_lo"], r[f"{m}_hi"]) for m in RATES)
                + f" | {_seconds(r['latency_p50_s'])} | {_seconds(r['latency_p95_s'])} | {tokens}"
                + f" | {_dollars(r.get('cost_usd', math.nan))} | {r['recorded'] or '-'} |"
            )
        lines.append("")
        said = [f"- {line}" for where, line in explanations if where == source]
        lines += [*said, ""] if said else []
    repeated = card[card["trials"] > 1] if "trials" in card else card.iloc[0:0]
    if not repeated.empty:
        lines += [
            "## Repeated trials",
            "",
            "pass@1: the mean per-case pass rate, its 95 % interval over cases (the accuracy above counts "
            "every trial as if independent); pass^N: the share of cases that passed every trial.",
            "",
            "| source | adapter | model | trials | pass@1 | pass^N | flaky cases |",
            "|---|---|---|---:|---|---|---:|",
        ]
        for _, r in repeated.iterrows():
            lines.append(
                f"| {r['source']} | {r['adapter']} | {r['model']} | {r['trials']} | "
                f"{_pct(r['pass_at_1'], r['pass_at_1_lo'], r['pass_at_1_hi'])} | "
                f"{_pct(r['pass_all'], r['pass_all_lo'], r['pass_all_hi'])} | {int(r['flaky'])} |"
            )
        lines.append("")
    if not categories.empty:
        lines += [
            "## Per category",
            "",
            "| source | adapter | model | category | n | accuracy |",
            "|---|---|---|---|---:|---|",
        ]
        for _, r in categories.iterrows():
            label = "EMULATED (pipeline only)" if r["source"] == "emulated" else r["source"]
            lines.append(
                f"| {label} | {r['adapter']} | {r['model']} | {r['category']} | {r['n']} | "
                f"{_pct(r['accuracy'], r['accuracy_lo'], r['accuracy_hi'])} |"
            )
        lines.append("")
    if tasks is not None:
        from xpeval.evals.verdict import pass_hat_k

        lines += pass_hat_k.to_markdown(tasks)
    return "\n".join(lines)


def write_scorecard(
    frame: pd.DataFrame, directory: Path, headline: Sequence[str] = (), card: pd.DataFrame | None = None
) -> dict[str, Path]:
    """reports/scorecard.{md,csv,parquet} (+ the per-category csv and the tidy results parquet);
    `headline` opens the markdown (the run's verdict and what changed); `card`: `scorecard(frame)`
    when the caller has it already."""
    directory.mkdir(parents=True, exist_ok=True)
    card, categories = scorecard(frame) if card is None else card, by_category(frame)
    paths = {
        "md": directory / "scorecard.md",
        "csv": directory / "scorecard.csv",
        "parquet": directory / "scorecard.parquet",
        "categories": directory / "scorecard_by_category.csv",
        "results": directory / "results.parquet",
    }
    from xpeval.evals.verdict.pass_hat_k import task_pass_hat_k

    flaky, tasks = flaky_cases(frame), task_pass_hat_k(frame)
    text = to_markdown(card, categories, headline, tasks, refusal_explanations(frame))
    if not flaky.empty:
        listed = [
            f"- {r.adapter} ({r.model}, {r.source}): {r.case_id}: {r.passed}/{r.trials} trials passed"
            for r in flaky.itertuples()
        ]
        text += "\n".join(["## Flaky cases", "", *listed, ""]) + "\n"
        flaky.to_csv(directory / "scorecard_flaky.csv", index=False)
    paths["md"].write_text(text, encoding="utf-8")
    card.to_csv(paths["csv"], index=False)
    card.astype({"source": str}).to_parquet(paths["parquet"], index=False)
    categories.to_csv(paths["categories"], index=False)
    if not tasks.empty:
        paths["tasks"] = directory / "scorecard_tasks.csv"
        tasks.to_csv(paths["tasks"], index=False)
    frame.to_parquet(paths["results"], index=False)
    return paths
