"""pass^k of task cases, as τ²-bench reports it: how reliably a model solves a task k times in a row.

For one task played n times with c successes (reward 1), pass^k = C(c, k) / C(n, k): the chance
that k trials drawn without replacement from the n all succeed (τ-bench's paper, arXiv
2406.12045; τ²-bench's `pass_hat_k`). It is computed with `math.comb`, exact integers, as τ²'s
code does, then averaged over tasks for k = 1 .. the fewest trials any task has (τ² lowers its
largest k the same way). pass^1 is the mean reward.

Task rows only, reported beside the scorecard's rates and never mixed into them; the emulator's
rows keep their `emulated` source (they check the pipeline, never a model).
"""

from __future__ import annotations

import math

import pandas as pd

KEY = ["source", "adapter", "model"]
TASK_CATEGORY = "task"


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """C(successes, k) / C(trials, k) for one task (`math.comb`)."""
    if not 0 <= successes <= trials or not 1 <= k <= trials:
        raise ValueError(
            f"pass^k needs 0 <= successes <= trials and 1 <= k <= trials, got {successes}, {trials}, {k}"
        )
    return math.comb(successes, k) / math.comb(trials, k)


def task_pass_hat_k(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (source, adapter, model) that played task cases: how many tasks, the fewest
    and most trials a task had, and `pass^1` .. `pass^K` (K: the fewest trials), each averaged
    over tasks. Empty when no task was played."""
    tasks = (
        frame[(frame["category"] == TASK_CATEGORY) & frame["correct"].notna()] if not frame.empty else frame
    )
    if tasks.empty:
        return pd.DataFrame(columns=[*KEY, "tasks", "trials_min", "trials_max"])
    records = []
    for name, group in tasks.groupby(KEY, sort=False, observed=True):
        per_task = group.astype({"correct": bool}).groupby("case_id")["correct"].agg(["size", "sum"])
        fewest = int(per_task["size"].min())
        record: dict[str, object] = dict(zip(KEY, name, strict=True))
        record.update(tasks=len(per_task), trials_min=fewest, trials_max=int(per_task["size"].max()))
        for k in range(1, fewest + 1):
            values = [
                pass_hat_k(int(n), int(c), k) for n, c in zip(per_task["size"], per_task["sum"], strict=True)
            ]
            record[f"pass^{k}"] = sum(values) / len(values)
        records.append(record)
    return pd.DataFrame.from_records(records)


def to_markdown(table: pd.DataFrame) -> list[str]:
    """The pass^k table as markdown lines (none when no task was played)."""
    if table.empty:
        return []
    ks = sorted((c for c in table.columns if c.startswith("pass^")), key=lambda c: int(c[5:]))
    lines = [
        "## Tasks: pass^k",
        "",
        "τ²-style tasks only (category `task`): pass^k = C(c,k)/C(n,k) per task (n trials, c with "
        "reward 1), averaged over tasks; k up to the fewest trials a task had. Beside the rates "
        "above, never part of them.",
        "",
        "| source | adapter | model | tasks | trials | " + " | ".join(ks) + " |",
        "|---|---|---|---:|---:|" + "---:|" * len(ks),
    ]
    for _, r in table.iterrows():
        label = "EMULATED (pipeline only)" if r["source"] == "emulated" else r["source"]
        trials = (
            f"{r['trials_min']}"
            if r["trials_min"] == r["trials_max"]
            else f"{r['trials_min']}-{r['trials_max']}"
        )
        values = " | ".join("-" if pd.isna(r.get(k)) else f"{float(r[k]):.3f}" for k in ks)
        lines.append(f"| {label} | {r['adapter']} | {r['model']} | {r['tasks']} | {trials} | {values} |")
    lines.append("")
    return lines


__all__ = ["TASK_CATEGORY", "pass_hat_k", "task_pass_hat_k", "to_markdown"]
