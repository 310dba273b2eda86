"""Which episodes a run plays: cases x adapters x models, filtered and sharded (pure)."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from adapters.registry import get_entry
from evals.cases import Case
from evals.errors import UserError


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as written on the command line: `--shard 2/4`)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            left, right = text.split("/")
            shard = cls(int(left), int(right))
        except ValueError:
            raise UserError(f"--shard must look like i/N (for example 1/4), got {text!r}") from None
        if not 1 <= shard.index <= shard.count:
            raise UserError(f"--shard {text}: need 1 <= i <= N")
        return shard

    def holds(self, case_id: str, adapter_id: str) -> bool:
        # A content hash, not Python's salted hash(): every machine must agree on the split.
        digest = hashlib.sha256(f"{case_id}\0{adapter_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


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


TRIAL_MARK = "@"
"""Between a case id and its trial in an episode id: `weather_simple_01@2` is its third trial."""


def episode_id(case_id: str, trial: int) -> str:
    """The id of one trial of a case: the case id itself for the first, `<case>@<trial>` after.
    It names the trial's cassette and its key in results and baselines."""
    return case_id if trial == 0 else f"{case_id}{TRIAL_MARK}{trial}"


def split_episode_id(value: str) -> tuple[str, int]:
    """(case id, trial) of an episode id."""
    case_id, mark, trial = value.rpartition(TRIAL_MARK)
    if mark and trial.isdigit():
        return case_id, int(trial)
    return value, 0


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


PlannedKey = tuple[str, str, str | None]
"""(episode id, adapter id, model) of a planned episode; model None: resolved when it starts."""


class RunPlan(BaseModel):
    """Every episode a run plans, written compactly (the cases, each adapter's models, the
    shard) so a results file's header stays small however many episodes it plans."""

    model_config = ConfigDict(extra="forbid")

    cases: list[str]
    models: dict[str, list[str | None]]
    """Per adapter, in run order, its models."""
    shard: str | None = None
    repeat: int = 1

    @classmethod
    def of(
        cls,
        case_ids: Sequence[str],
        models: dict[str, list[str | None]],
        shard: Shard | None,
        repeat: int = 1,
    ) -> RunPlan:
        return cls(
            cases=list(case_ids),
            models={a: list(m) for a, m in models.items()},
            shard=f"{shard.index}/{shard.count}" if shard else None,
            repeat=repeat,
        )

    def pairs(self) -> set[tuple[str, str]]:
        """(adapter, model) pairs planned with a named model."""
        return {(a, m) for a, models in self.models.items() for m in models if m is not None}

    def cases_of(self, adapter_id: str) -> list[str]:
        """The episode ids planned for one adapter (every trial of all its cases, or its shard's)."""
        shard = Shard.parse(self.shard) if self.shard else None
        return [
            episode_id(c, trial)
            for c in self.cases
            if shard is None or shard.holds(c, adapter_id)
            for trial in range(self.repeat)
        ]

    def keys(self) -> list[PlannedKey]:
        """The planned episodes, in the order `plan` plays them."""
        shard = Shard.parse(self.shard) if self.shard else None
        return [
            (episode_id(case_id, trial), adapter_id, model)
            for case_id in self.cases
            for adapter_id, models in self.models.items()
            if shard is None or shard.holds(case_id, adapter_id)
            for model in models
            for trial in range(self.repeat)
        ]
