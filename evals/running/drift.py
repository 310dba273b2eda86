"""Drift: do the adapters still send what their cassettes recorded?

For each cassette, the whole episode is played again exactly as `xpeval run` replays it: the
run's backend opens it (`xpeval.evals.running.targets.EpisodeFactory`: the cassette bound, the
run's one adapter for the target the cassette was recorded from, read as it was read then) and
the runner's `play_open` plays it (one turn, or the agent loop for multi-turn and approval
cases), streamed as it was recorded. Every request the adapter builds today is matched against
the recording: a request that no longer matches comes back with a unified diff against the
closest recorded one, and a recorded interaction left unplayed is drift too. A cassette the
registry or the case set no longer explains, a cassette without xpeval metadata, and a
(registered adapter, case) pair without a cassette are reported as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from xpeval.adapters.registry import (
    adapter_ids,
    effective_contract,
    get_entry,
    provider_of,
)
from xpeval.adapters.wires import get_wire
from xpeval.errors import CassetteError, UnknownAdapterError
from xpeval.evals.cassettes.binding import record_command
from xpeval.evals.cassettes.cassette import load_recording
from xpeval.evals.cassettes.meta import CassetteMeta, Mode
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.results.run_plan import split_episode_id

if TYPE_CHECKING:
    from xpeval.evals.cases import Case
    from xpeval.evals.running.targets import EpisodeFactory

EPISODE_TIMEOUT = 60.0
"""Seconds one replayed episode may take before it counts as hung."""


def recorded_stream(path: Path, adapter_id: str) -> bool:
    """Whether the recorded episode at `path` asked for streamed responses (from its first request).

    Which cases stream is the runner's policy, not the adapter's contract: drift checks what
    the adapter sends for the same question.
    """
    recording = load_recording(path)
    if recording is None or not recording.pairs:
        return False
    request = recording.pairs[0][0]
    try:
        body = json.loads(request.body) if request.body else None
    except (ValueError, RecursionError):
        body = None
    wire = get_wire(effective_contract(adapter_id).wire)
    return wire.is_stream(request.uri, body if isinstance(body, dict) else None)


@dataclass(frozen=True)
class CassetteFinding:
    """Something wrong with one (adapter, case) cassette."""

    adapter: str
    model: str | None
    case: str
    path: Path
    kind: str
    """`drift`, `missing`, `orphan` (no such adapter or case) or `unreadable`."""
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Stale:
    path: Path
    meta: CassetteMeta
    age_days: float


@dataclass
class DriftReport:
    checked: int = 0
    findings: list[CassetteFinding] = field(default_factory=list)
    stale: list[Stale] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.findings)


async def _replay_one(
    factory: EpisodeFactory, adapter_id: str, name: str, case: Case, model: str, path: Path
) -> list[str]:
    """The episode of one cassette played as `xpeval run` replays it (the run's backend opens it,
    `play_open` plays it), streamed as recorded: what the replay found wrong."""
    from xpeval.evals.running.plan import PlannedEpisode
    from xpeval.evals.running.runner import play_open, replay_problems, unique

    planned = PlannedEpisode(case, adapter_id, model, split_episode_id(name)[1])
    if planned.episode_id != name:  # e.g. `case@0`: no run plays it under this name
        return [
            f"{path}: not a cassette name `xpeval run` plays (it would be {planned.episode_id}); delete it"
        ]
    episode = factory.open(planned)
    try:
        outcome = await play_open(
            episode, case, timeout=EPISODE_TIMEOUT, stream=recorded_stream(path, adapter_id)
        )
    except TimeoutError:
        return [f"{path}: replay did not finish within {EPISODE_TIMEOUT:.0f} s"]
    return unique([*episode.finish(True), *replay_problems(episode, outcome.error)])


def _known_adapter(adapter_id: str) -> bool:
    try:
        get_entry(adapter_id)
    except UnknownAdapterError:
        return False
    return True


async def check_cassettes(
    store: CassetteStore,
    cases: Mapping[str, Case],
    *,
    adapters: Iterable[str],
    max_age_days: float | None = None,
    now: datetime,
    on_cassette: Callable[[int, int, str], None] | None = None,
    record_flags: Sequence[str] = (),
) -> DriftReport:
    """Replay every cassette of `adapters` against today's requests; list missing and stale ones.

    Folders of unregistered adapters are reported when every registered adapter is checked.
    `on_cassette(done, total, name)` is told of each cassette checked (a progress bar).
    `record_flags` go into every printed re-record hint (the project's --case-dir, --cassettes).
    """
    from xpeval.evals.running.targets import EpisodeFactory, TargetPicker

    factory = EpisodeFactory(
        mode=Mode.REPLAY, store=store, picker=TargetPicker(), record_flags=tuple(record_flags)
    )
    try:
        return await _check_all(
            store, cases, list(adapters), factory, max_age_days, now, on_cassette, record_flags
        )
    finally:
        await factory.aclose()  # the adapters the episodes shared, as the run closes its own


async def _check_all(
    store: CassetteStore,
    cases: Mapping[str, Case],
    wanted: list[str],
    factory: EpisodeFactory,
    max_age_days: float | None,
    now: datetime,
    on_cassette: Callable[[int, int, str], None] | None,
    record_flags: Sequence[str],
) -> DriftReport:
    every_adapter = set(wanted) >= set(adapter_ids())
    report = DriftReport()
    seen: set[tuple[str, str, str]] = set()
    selected = [
        found
        for found in store.iter_cassettes()
        if found[0] in wanted or not (_known_adapter(found[0]) or not every_adapter)
    ]
    for adapter_id, model, case_id, path in selected:
        seen.add((adapter_id, model, case_id))
        report.checked += 1
        finding = await _check_one(
            store, adapter_id, model, case_id, path, cases, factory, max_age_days, now, report, record_flags
        )
        if finding is not None:
            report.findings.append(finding)
        if on_cassette is not None:
            on_cassette(report.checked, len(selected), f"{adapter_id}/{model}/{case_id}")
    for adapter_id in wanted:
        for model in store.models(adapter_id) or [provider_of(adapter_id).default_model]:
            for case_id in cases:
                if (adapter_id, model, case_id) not in seen:
                    path = store.path(adapter_id, case_id, model)
                    report.findings.append(
                        CassetteFinding(
                            adapter_id,
                            model,
                            case_id,
                            path,
                            "missing",
                            (
                                f"{path}: no cassette for adapter {adapter_id}, model {model} and case "
                                f"{case_id}; "
                                f"record it with: "
                                f"{record_command(adapter_id, case_id, model=model, flags=record_flags)}",
                            ),
                        )
                    )
    return report


async def _check_one(
    store: CassetteStore,
    adapter_id: str,
    model: str,
    case_id: str,
    path: Path,
    cases: Mapping[str, Case],
    factory: EpisodeFactory,
    max_age_days: float | None,
    now: datetime,
    report: DriftReport,
    record_flags: Sequence[str] = (),
) -> CassetteFinding | None:
    command = record_command(adapter_id, case_id, model=model, flags=record_flags)
    try:
        meta = store.meta(path)
    except CassetteError as exc:
        return CassetteFinding(
            adapter_id, model, case_id, path, "unreadable", (f"{exc}; record it again with: {command}",)
        )
    if meta is None:
        return CassetteFinding(
            adapter_id,
            model,
            case_id,
            path,
            "unreadable",
            (f"{path}: carries no xpeval metadata (not recorded by xpeval); record it with: {command}",),
        )
    if max_age_days is not None and meta.age_days(now) > max_age_days:
        report.stale.append(Stale(path, meta, meta.age_days(now)))
    if not _known_adapter(adapter_id):
        return CassetteFinding(
            adapter_id,
            model,
            case_id,
            path,
            "orphan",
            (f"{path}: adapter {adapter_id!r} is not registered any more; delete the cassette",),
        )
    case = cases.get(split_episode_id(case_id)[0])  # a later trial's cassette is `<case>@<trial>`
    if case is None:
        return CassetteFinding(
            adapter_id,
            model,
            case_id,
            path,
            "orphan",
            (f"{path}: case {case_id!r} is not in the case set any more; delete the cassette",),
        )
    problems = await _replay_one(factory, adapter_id, case_id, case, meta.model, path)
    if problems:
        return CassetteFinding(adapter_id, model, case_id, path, "drift", tuple(problems))
    return None
