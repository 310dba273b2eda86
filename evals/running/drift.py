"""Drift: do the adapters still send what their cassettes recorded?

For each cassette, the whole episode is played again through the real adapter in replay mode,
the way the runner plays it (`xpeval.evals.running.play.play_case`: one turn, or the agent loop for
multi-turn and approval cases; the adapter built by `xpeval.evals.running.targets.build_adapter` for the
target the cassette was recorded from). Every request the adapter builds today is matched
against the recording: a request that no longer matches comes back with a unified diff against
the closest recorded one, and a recorded interaction left unplayed is drift too. A cassette the
registry or the case set no longer explains, a cassette without xpeval metadata, and a
(registered adapter, case) pair without a cassette are reported as well.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.registry import (
    adapter_ids,
    effective_contract,
    get_entry,
    provider_of,
)
from xpeval.adapters.wires import get_wire
from xpeval.errors import CassetteError, UnknownAdapterError
from xpeval.evals.cassettes.binding import BoundCassette, bind_cassette, record_command, recording_fault
from xpeval.evals.cassettes.cassette import load_recording
from xpeval.evals.cassettes.meta import TARGET_OF_SOURCE, CassetteMeta, Mode
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.results.run_plan import split_episode_id

if TYPE_CHECKING:
    from xpeval.evals.cases import Case

EPISODE_TIMEOUT = 60.0
"""Seconds one replayed episode may take before it counts as hung."""

Replayer = Callable[[BoundCassette, str, "Case", CassetteMeta], Awaitable[list[str]]]
"""Plays one (adapter, case) episode through `episode.transport`; returns what the recorded
responses themselves got wrong (a body that no longer decodes)."""


def recorded_stream(episode: BoundCassette, adapter_id: str) -> bool:
    """Whether the recorded episode asked for streamed responses (from its first request).

    Which cases stream is the runner's policy, not the adapter's contract: drift checks what
    the adapter sends for the same question.
    """
    recording = load_recording(episode.cassette_path) if episode.cassette_path else None
    if recording is None or not recording.pairs:
        return False
    request = recording.pairs[0][0]
    try:
        body = json.loads(request.body) if request.body else None
    except (ValueError, RecursionError):
        body = None
    wire = get_wire(effective_contract(adapter_id).wire)
    return wire.is_stream(request.uri, body if isinstance(body, dict) else None)


async def replay_with_runner(
    episode: BoundCassette, adapter_id: str, case: Case, meta: CassetteMeta
) -> list[str]:
    """Play the episode exactly as the runner does, against the cassette."""
    from xpeval.evals.running.play import play_case
    from xpeval.evals.running.targets import build_adapter

    settings = AdapterSettings(model=meta.model, transport=episode.transport)
    adapter = build_adapter(adapter_id, TARGET_OF_SOURCE[meta.source], settings, meta.text_calls)
    try:
        outcome = await play_case(adapter, case, meta.model, stream=recorded_stream(episode, adapter_id))
    finally:
        await adapter.aclose()
    fault = None if episode.has_misses else recording_fault(episode.cassette_path, outcome.error)
    return [fault] if fault else []


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
    store: CassetteStore,
    adapter_id: str,
    name: str,
    case: Case,
    meta: CassetteMeta,
    replayer: Replayer,
    record_flags: Sequence[str] = (),
) -> list[str]:
    episode = bind_cassette(
        store, adapter_id, name, Mode.REPLAY, source=meta.source, model=meta.model, flags=record_flags
    )
    try:
        broken = await asyncio.wait_for(replayer(episode, adapter_id, case, meta), EPISODE_TIMEOUT)
    except TimeoutError:
        return [f"{episode.cassette_path}: replay did not finish within {EPISODE_TIMEOUT:.0f} s"]
    return [*episode.finish(), *broken]


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
    replayer: Replayer | None = None,
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
    replayer = replayer or replay_with_runner
    wanted = list(adapters)
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
            store, adapter_id, model, case_id, path, cases, replayer, max_age_days, now, report, record_flags
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
    replayer: Replayer,
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
    problems = await _replay_one(store, adapter_id, case_id, case, meta, replayer, record_flags)
    if problems:
        return CassetteFinding(adapter_id, model, case_id, path, "drift", tuple(problems))
    return None
