"""The gate's chain of custody: a results file is evidence, not a verdict.

A results file, or a shard from another CI job, is untrusted input: anyone can edit a row's
`correct` in an editor, splice in rows of another run, or relabel a row's source. Before the
gate (or `xpeval merge`) trusts a file, every check here must hold, and the first that does
not is one line (`CustodyError`, exit 2) naming the row:

- every row, and the completion record, carries the header's run id (nothing spliced in); no
  line follows the completion record, and it counts the result rows the file holds;
- every final row is of an episode the header plans, and each planned episode has exactly one
  final row (two would leave "which one counts" to the reader);
- each final row is scored again from the calls it stores and its case, by the same pure
  functions the runner used (`episode_verdict`, `with_schema_validity`): every verdict field the
  scorecard reads (`correct`, `tool_selection_correct`, `arguments_correct`, `irrelevance`,
  `malformed`, `schema_valid`) and the case's category must agree;
- in a replay, each row's source (and its recording's model and date) is what its cassette's
  provenance says; a row with no readable cassette behind it must be a failure. A conformance
  failure (a replay problem, a runner error) is not checked: it fails the gate whatever it says.

A row is scored from what it keeps, by the runner when it writes it and here again: the calls
as the row bound kept them (`xpeval.evals.results.rows.bounded`: an argument cut to 4 KB is its
cut text, which matches no expected value; a tool name is never cut short of any real name) and
the count of calls it dropped (a row that dropped calls is never correct). So a row with a cut
argument gets the same verdict in `run` and in the gate: its tool selection checked from the
names it keeps, its arguments scored as kept. A row with more than `MAX_RESCORED_CALLS` calls
is not one xpeval wrote (the runner keeps no more) and is refused.

`judge` and `judge_sources` are pure (records, cases and provenance in, refusals out);
`check_custody` is the edge that reads them (`xpeval.evals.results.evidence`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xpeval.errors import UserError
from xpeval.evals.results.rows import (
    MAX_ROW_CALLS,
    REPLAYED_SOURCE,
    EpisodeKey,
    ResultRow,
    RunHeader,
    RunTrailer,
    stored_turns,
)
from xpeval.evals.results.run_plan import TRIAL_MARK, Shard, episode_id
from xpeval.evals.verdict.argument_validity import ToolValidators, case_validators, episode_schema_valid
from xpeval.evals.verdict.baseline import CONFORMANCE_KINDS
from xpeval.evals.verdict.scoring import episode_verdict

if TYPE_CHECKING:
    from xpeval.evals.cases.model import Case
    from xpeval.evals.cassettes.meta import CassetteMeta
    from xpeval.evals.results.evidence import CaseSet
    from xpeval.evals.results.load import LoadedRun

MAX_RESCORED_CALLS = MAX_ROW_CALLS
"""Most calls one row may store and still be scored again: the most a row keeps (the runner
counts the rest in `dropped_calls`); a row with more is not one xpeval wrote, and is refused, so
a hostile file cannot make the gate slow."""
VERDICT_FIELDS = (
    "correct",
    "tool_selection_correct",
    "arguments_correct",
    "irrelevance",
    "malformed",
    "schema_valid",
)
"""A row's verdict fields the scorecard and the gate read, each recomputed from its calls."""


class CustodyError(UserError):
    """A results file whose rows are not the evidence they claim to be."""


@dataclass(frozen=True)
class Replayed:
    """What a final row of a replay says about where its answer came from."""

    source: str
    recorded_at: str | None
    recorded_model: str | None
    failed: bool
    conformance_failure: bool
    """It ended in the suite's own failure (no usable cassette, a runner error): the gate fails
    it whatever its source says, and its source may be a placeholder (the runner could not open
    the episode, or the cassette the gate reads now was not there when the run played it)."""


@dataclass
class Custody:
    """What `judge` found: every refusal, in file order, and for a replay each final row's
    provenance claims (checked by `judge_sources` once the cassettes are read)."""

    refusals: list[str] = field(default_factory=list)
    replayed: dict[EpisodeKey, Replayed] = field(default_factory=dict)


def name_of(key: EpisodeKey) -> str:
    """An episode as messages name it: episode/adapter/model (case, adapter, model)."""
    return "/".join(key)


def rescore(row: ResultRow, case: Case, validators: ToolValidators | None = None) -> dict[str, Any]:
    """The verdict fields of `row` as its stored calls and its case score them (`validators`:
    the case's, made once for many rows)."""
    failed = row.error_kind is not None
    verdict = episode_verdict(
        case, stored_turns(row.calls), failed, dropped_calls=row.dropped_calls, said=row.said, ended=row.ended
    )
    # A row without calls is left as it is by `with_schema_validity`: its `schema_valid` is
    # the runner's default (not judged), never what the row claims.
    verdict["schema_valid"] = episode_schema_valid(
        row, validators or case_validators(case), judged=not failed
    )
    return verdict


MAX_REMEMBERED_ANSWERS = 50_000
"""Distinct answers whose scores `judge` keeps (a file of a million distinct answers must not
hold a million scores in memory); answers past it are scored each time."""

AnswerKey = tuple[str, bool, str, tuple[str, ...], int]
"""A case id, whether the episode failed, its calls as JSON (a task's with its texts and ending),
the fields the row bound cut, the calls it dropped."""


def _answer_key(row: ResultRow, case: Case) -> AnswerKey:
    """What `rescore` reads of a row and its case, as a key: trials of one case that gave the
    same answer (repeated runs, a model at temperature 0) are scored once. Key order is kept:
    the first violation a validator names may depend on it."""
    calls = [(c.turn, c.name, c.arguments, c.parse_error) for c in row.calls]
    cut = tuple(note.field for note in row.truncated)
    answer = [calls, row.said, row.ended] if case.task is not None else calls  # a task's texts are scored too
    return case.id, row.error_kind is not None, json.dumps(answer, default=str), cut, row.dropped_calls


class Rescorer:
    """`rescore` over many rows: each case's schema validators made once, and the scores of up
    to `MAX_REMEMBERED_ANSWERS` answers kept (trials that gave the same answer scored once)."""

    def __init__(self) -> None:
        self._scores: dict[AnswerKey, dict[str, Any]] = {}
        self._validators: dict[str, ToolValidators] = {}

    def __call__(self, row: ResultRow, case: Case) -> dict[str, Any]:
        """`rescore`, or the score of the same answer seen before."""
        key = _answer_key(row, case)
        scored = self._scores.get(key)
        if scored is None:
            validators = self._validators.get(case.id)
            if validators is None:
                validators = self._validators[case.id] = case_validators(case)
            scored = rescore(row, case, validators)
            if len(self._scores) < MAX_REMEMBERED_ANSWERS:
                self._scores[key] = scored
        return scored


def judge_row(row: ResultRow, case: Case, rescored: Rescorer | None = None) -> str | None:
    """Why a final row's stored verdict is not what its calls score; None when it is
    (`rescored`: the `Rescorer` of the file's rows, None: scored on its own)."""
    name = name_of(row.key)
    if len(row.calls) > MAX_RESCORED_CALLS:
        return (
            f"row {name} is too large to score again ({len(row.calls)} calls; the gate scores rows of "
            f"at most {MAX_RESCORED_CALLS} again): its stored verdict is not evidence"
        )
    if any(call.turn < 0 for call in row.calls):
        return f"row {name} stores a call of turn < 0: not a row xpeval wrote"
    if row.category != case.category:
        return f"row {name} says category {row.category!r}, its case is {case.category!r}"
    scored = (rescored or rescore)(row, case)
    differ = [f for f in VERDICT_FIELDS if getattr(row, f) != scored[f]]
    if not differ:
        return None
    shown = ", ".join(f"{f}={_json(getattr(row, f))}" for f in differ)
    scored_shown = ", ".join(f"{f}={_json(scored[f])}" for f in differ)
    why = f" ({scored['reason']})" if scored.get("reason") and "correct" in differ else ""
    return f"row {name} says {shown} but its stored calls score {scored_shown}{why}"


def _json(value: object) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else repr(value)


def judge(header: RunHeader, records: Iterable[Any], cases: Mapping[str, Case]) -> Custody:
    """Every check of the module docstring but the cassettes', over a file's records in order
    (the header's run, its plan, its case set's cases by id)."""
    custody = Custody()
    refuse = custody.refusals.append
    replay = header.config.get("mode") == "replay"
    episodes = _PlannedEpisodes(header)
    rescored = Rescorer()
    results = 0
    trailers: list[RunTrailer] = []
    for record in records:
        if isinstance(record, RunTrailer):
            trailers.append(record)
            if record.run != header.run:
                refuse(
                    f"its completion record is of run {record.run!r}, not of this file's run {header.run!r}"
                )
            continue
        if not isinstance(record, ResultRow):  # a `--batch` run's batch record
            _judge_batch_record(record, header, bool(trailers), refuse)
            continue
        row = record
        results += 1
        name = name_of(row.key)
        if trailers:
            refuse(f"row {name} comes after the completion record: not one run's file")
        if row.run != header.run:
            refuse(f"row {name} is of run {row.run!r}, not of this file's run {header.run!r}: rows of "
                   "another run spliced in")  # fmt: skip
        if row.final and _judge_final(row, header, episodes, cases, refuse, rescored) and replay:
            custody.replayed[row.key] = Replayed(
                source=row.source,
                recorded_at=row.recorded_at,
                recorded_model=row.recorded_model,
                failed=row.error_kind is not None,
                conformance_failure=row.error_kind in CONFORMANCE_KINDS,
            )
    if len(trailers) > 1:
        refuse(f"{len(trailers)} completion records: not one run's file")
    for trailer in trailers[:1]:
        if trailer.rows != results:
            refuse(f"its completion record counts {trailer.rows} result rows, the file holds {results}")
    return custody


def _judge_batch_record(
    record: Any, header: RunHeader, after_trailer: bool, refuse: Callable[[str], None]
) -> None:
    """A batch record is of the file's run and comes before its completion record (what a batch
    holds is checked by the rows: each planned episode has exactly one final row)."""
    name = f"batch record {getattr(record, 'batch', '?')!r}"
    if getattr(record, "run", None) != header.run:
        refuse(f"{name} is of run {getattr(record, 'run', None)!r}, not of this file's run {header.run!r}")
    if after_trailer:
        refuse(f"{name} comes after the completion record: not one run's file")


class _PlannedEpisodes:
    """The episodes a run header plans, and how many final rows each has had so far. A plan entry
    without a model stands for the one model its adapter used.

    Kept as the plan is written (cases, each adapter's models, trials, shard), never expanded: a
    plan of a million episodes is a few hundred names, and the final rows seen so far are one
    byte each, so a file's size never sets the gate's memory. An episode is planned exactly when
    its id is one `RunPlan.keys` lists."""

    def __init__(self, header: RunHeader) -> None:
        plan = header.plan
        self._cases = {case_id: index for index, case_id in enumerate(plan.cases)} if plan else {}
        self._repeat = max(plan.repeat, 0) if plan else 0  # trials 0 .. repeat - 1, as `keys` lists
        self._shard = Shard.parse(plan.shard) if plan and plan.shard else None
        self._held: dict[tuple[str, str], bool] = {}
        self._slots: dict[tuple[str, str | None], int] = {}
        for adapter_id, models in (plan.models if plan else {}).items():
            for model in models:
                self._slots.setdefault((adapter_id, model), len(self._slots))
        self._finals = bytearray(len(self._cases) * self._repeat * len(self._slots))

    def count_final(self, key: EpisodeKey) -> int | None:
        """How many final rows the episode of `key` has had with this one (3 stands for 3 or
        more); None if not planned."""
        episode, adapter_id, model = key
        pair = self._slots.get((adapter_id, model))
        if pair is None:
            pair = self._slots.get((adapter_id, None))
        trial = self._trial(episode, adapter_id) if pair is not None else None
        if pair is None or trial is None:
            return None
        index, number = trial
        slot = (index * self._repeat + number) * len(self._slots) + pair
        self._finals[slot] = min(self._finals[slot] + 1, 3)
        return self._finals[slot]

    def _trial(self, episode: str, adapter_id: str) -> tuple[int, int] | None:
        """(case index, trial) of a planned episode id for `adapter_id`; None if not planned."""
        if episode in self._cases and self._repeat > 0 and self._holds(episode, adapter_id):
            return self._cases[episode], 0
        case_id, mark, trial = episode.rpartition(TRIAL_MARK)
        if not (mark and trial.isdigit() and case_id in self._cases):
            return None
        number = int(trial)
        if not (0 < number < self._repeat and episode_id(case_id, number) == episode):
            return None
        return (self._cases[case_id], number) if self._holds(case_id, adapter_id) else None

    def _holds(self, case_id: str, adapter_id: str) -> bool:
        if self._shard is None:
            return True
        held = self._held.get((case_id, adapter_id))
        if held is None:
            held = self._held[(case_id, adapter_id)] = self._shard.holds(case_id, adapter_id)
        return held


def _judge_final(
    row: ResultRow,
    header: RunHeader,
    episodes: _PlannedEpisodes,
    cases: Mapping[str, Case],
    refuse: Callable[[str], None],
    rescored: Rescorer,
) -> bool:
    """A final row's checks: planned, the only final row of its episode, its verdict what its
    stored calls score. False when the row is of no planned episode (nothing more to check)."""
    name = name_of(row.key)
    seen = episodes.count_final(row.key)
    if seen is None:
        refuse(f"row {name} is of an episode its run header does not plan")
        return False
    if seen == 2:
        refuse(f"episode {name} has more than one final row: a run writes one per episode")
    case = cases.get(row.case_id)
    if case is None:
        refuse(
            f"row {name}: case {row.case_id!r} is not in the run's case set "
            f"{header.config.get('case_set', 'builtin')!r}, so it cannot be scored again"
        )
    else:
        problem = judge_row(row, case, rescored)
        if problem:
            refuse(problem)
    return True


def judge_sources(
    replayed: Mapping[EpisodeKey, Replayed], provenance: Callable[[EpisodeKey], CassetteMeta | None]
) -> list[str]:
    """Each replayed final row against what its episode's cassette says about itself
    (`provenance`: the cassette's metadata, None when there is no readable one)."""
    refusals: list[str] = []
    for key, claim in replayed.items():
        if claim.conformance_failure:
            continue
        meta = provenance(key)
        name = name_of(key)
        if meta is None:
            if not claim.failed:
                refusals.append(
                    f"row {name} is an answer, but no readable cassette of its episode vouches for it"
                )
            continue
        expected = REPLAYED_SOURCE[meta.source]
        if claim.source != expected:
            refusals.append(
                f"row {name} says source {claim.source!r}, its cassette was recorded {meta.source!r} "
                f"(source {expected!r}): a relabelled source"
            )
            continue
        recorded_at = meta.recorded_at.isoformat(timespec="seconds")
        if (claim.recorded_model, claim.recorded_at) != (meta.model, recorded_at):
            refusals.append(
                f"row {name} says it replays a recording of {claim.recorded_model} at {claim.recorded_at}, "
                f"its cassette is of {meta.model} at {recorded_at}"
            )
    return refusals


def check_custody(run: LoadedRun, root: Path, case_set: CaseSet | None = None) -> None:
    """CustodyError, one line, unless every check of the module docstring holds for the results
    file `run` was loaded from: its rows scored again on `case_set` (default: the project's at
    `root`, `project_case_set`), which must hold the cases its header records; its cassettes
    read from `root`."""
    from xpeval.evals.results.evidence import cassette_reader, check_case_set, project_case_set, records

    if case_set is None:
        case_set = project_case_set(root)
    check_case_set(run.path, run.header, case_set)
    custody = judge(run.header, records(run.path), case_set.cases)
    refusals = custody.refusals
    if custody.replayed:
        refusals += judge_sources(custody.replayed, cassette_reader(run.header, root))
    if refusals:
        more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
        raise CustodyError(f"{run.path}: not evidence the gate can trust: {refusals[0]}{more}")


__all__ = [
    "MAX_RESCORED_CALLS",
    "Custody",
    "CustodyError",
    "Replayed",
    "check_custody",
    "judge",
    "judge_row",
    "judge_sources",
    "rescore",
]
