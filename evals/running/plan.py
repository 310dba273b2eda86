"""Which episodes a run plays: cases x adapters x models, filtered and sharded (pure)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from xpeval.adapters.registry import get_entry
from xpeval.errors import UserError
from xpeval.evals.cases import Case
from xpeval.evals.results.run_plan import Shard, episode_id


@dataclass(frozen=True)
class PlannedEpisode:
    case: Case
    adapter_id: str
    model: str | None
    """None: the adapter's recorded or default model, resolved when the episode starts."""
    trial: int = 0
    """Which repetition of the case (`--repeat N`: 0 .. N-1)."""

    @property
    def episode_id(self) -> str:
        return episode_id(self.case.id, self.trial)


def parse_models(specs: Sequence[str], adapters: Sequence[str]) -> dict[str, list[str | None]]:
    """`--models` entries: `model` (every selected adapter) or `adapter=model` (one adapter)."""
    chosen: dict[str, list[str | None]] = {a: [] for a in adapters}
    for spec in specs:
        for item in (part.strip() for part in spec.split(",")):
            if not item:
                continue
            if "=" in item:
                adapter_id, model = (x.strip() for x in item.split("=", 1))
                get_entry(adapter_id)
                if adapter_id not in chosen:
                    raise UserError(
                        f"--models {item}: adapter {adapter_id} is not among the selected adapters"
                    )
                chosen[adapter_id].append(model)
            else:
                for adapter_id in chosen:
                    chosen[adapter_id].append(item)
    return {a: (models or [None]) for a, models in chosen.items()}


def select_cases(cases: Sequence[Case], patterns: Sequence[str], categories: Sequence[str]) -> list[Case]:
    """Cases whose id matches any pattern (glob) and whose category is listed (empty: all)."""
    selected = [
        case
        for case in cases
        if (not patterns or any(fnmatch.fnmatchcase(case.id, p) for p in patterns))
        and (not categories or case.category in categories)
    ]
    if not selected:
        raise UserError("no case matches --cases/--categories")
    return selected


def plan(
    cases: Sequence[Case],
    adapters: Sequence[str],
    models: dict[str, list[str | None]],
    shard: Shard | None,
    repeat: int = 1,
) -> list[PlannedEpisode]:
    """Every episode of the run, case-major so early results cover every adapter (a case's
    trials stay in one shard)."""
    return [
        PlannedEpisode(case=case, adapter_id=adapter_id, model=model, trial=trial)
        for case in cases
        for adapter_id in adapters
        if shard is None or shard.holds(case.id, adapter_id)
        for model in models[adapter_id]
        for trial in range(repeat)
    ]
