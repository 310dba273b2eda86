"""What a results file says a run plans, and the ids of its episodes (pure).

A run's header records its plan compactly (`RunPlan`: the cases, each adapter's models, the
shard, the trials); every reader of results (completeness, merge, the gate, the baseline) expands
it with the same rules `xpeval.evals.running.plan` played it by. An episode id is the case id, and
`<case>@<trial>` for later trials.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from xpeval.errors import UserError

if TYPE_CHECKING:
    from xpeval.evals.cases.model import Case


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


CASE_DIGESTS = "case_digests"
"""The run header's record of what each planned case was (`case_digests`): case id -> digest.
A run's case set is identified by these, never by the folder name it was loaded from
(docs/reference-runs.md, "What identifies a case set")."""


def case_digest(case: Case) -> str:
    """The sha256 of a case's content (every field, as canonical JSON): two cases with one id
    and different tools, messages or expected calls have two digests."""
    text = json.dumps(case.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def case_digests(cases: Iterable[Case]) -> dict[str, str]:
    """Each case's digest by id, as a run header records them."""
    return {case.id: case_digest(case) for case in cases}


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
