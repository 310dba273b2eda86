"""The runner: cases x adapters x models, concurrently, with every attempt on record.

Per adapter it bounds concurrency and request rate; each episode (one case through one adapter
and model) is retried on retryable provider failures with backoff that honours Retry-After
(without sleeping when replaying: a recorded retry needs no waiting). Every attempt is a
result row appended as it arrives, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Protocol

import httpx2
from aiolimiter import AsyncLimiter

from xpeval.adapters.contract import ProviderError, TurnRequest, TurnResult, Usage
from xpeval.errors import AdapterFactoryError
from xpeval.evals.cases import Case
from xpeval.evals.cassettes.binding import recording_fault
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import (
    MAX_ROW_CALLS,
    CallRecord,
    ResultRow,
    RowSource,
    bounded,
    now_iso,
    stored_turns,
    with_text,
)
from xpeval.evals.running.cost import episode_cost
from xpeval.evals.running.episode_transport import bound
from xpeval.evals.running.plan import PlannedEpisode
from xpeval.evals.running.play import AdapterSwitch, EpisodeOutcome, play_case
from xpeval.evals.running.retry import backoff_delay
from xpeval.evals.runtime.loop import TurnTaker
from xpeval.evals.scrub import current_scrubber, scrub_value
from xpeval.evals.verdict.argument_validity import with_schema_validity
from xpeval.evals.verdict.scoring import episode_verdict


@dataclass
class OpenEpisode:
    """An episode ready to play: the adapter to use and where its answers come from."""

    adapter: TurnTaker
    adapter_id: str
    wire: str
    model: str
    source: RowSource
    transport: httpx2.AsyncBaseTransport | None = None
    """What this episode's requests go through (its cassette, its emulator script), bound
    around its task on the run's shared adapter (`xpeval.evals.running.episode_transport`); None: the
    shared pool."""
    recorded_at: str | None = None
    recorded_model: str | None = None
    stream: bool = False
    sleeps: bool = True
    """Whether retries really wait (not when replaying a recording)."""
    replayed_from: str | None = None
    """The cassette answering this episode in replay: a response of it that does not decode is
    the cassette's fault (a conformance failure), never the model's."""
    problems: Callable[[], list[str]] = field(default=lambda: [])
    """Replay problems so far (unmatched requests): a conformance failure, never retried."""
    finish: Callable[[bool], list[str]] = field(default=lambda succeeded: [])
    """Close the episode (save a recording when `succeeded`); returns replay problems."""
    retry: Callable[[], None] = field(default=lambda: None)
    """Called before a retried attempt (a recording keeps only the final attempt)."""
    switch: AdapterSwitch | None = None
    """Reaches the adapter a case turn names (a handoff); None: the run reaches only this one."""
    batch: str | None = None
    """The batch (xpeval's id) that answered this episode (`xpeval run --batch`), or, replayed,
    "recorded" for a batch recording: priced at the batch price."""


class EpisodeBackend(Protocol):
    """Where episodes get their adapter: cassettes, a live provider, the local model, the emulator."""

    def open(self, planned: PlannedEpisode) -> OpenEpisode: ...


@dataclass(frozen=True)
class RunSettings:
    concurrency: int = 4
    """Episodes in flight per adapter."""
    rate: float | None = None
    """Requests per second per adapter (None: unlimited)."""
    max_attempts: int = 3
    episode_timeout: float = 300.0
    """Wall-clock bound on one attempt of one episode (every model turn in it)."""
    backoff_base: float = 1.0
    backoff_cap: float = 60.0


class Progress(Protocol):
    def advance(self, row: ResultRow) -> None: ...


@dataclass
class Attempt:
    """What one attempt at an episode ended with."""

    number: int
    final: bool
    outcome: EpisodeOutcome | None
    error: ProviderError | None
    problems: list[str]
    latency: float
    started: str
    runner_error: str | None = None

    def failure(self) -> tuple[str | None, str | None, int | None, str | None]:
        """(kind, type, status, message) of what went wrong; all None when nothing did. A replay
        problem is the cassette's, a runner error the suite's, anything else the provider's."""
        if self.problems:
            return "cassette", None, None, "; ".join(self.problems)
        if self.runner_error is not None:
            return "runner", None, None, self.runner_error
        if self.error is not None:
            return self.error.kind, self.error.type, self.error.status, self.error.message
        return None, None, None, None


def _usage(episode: OpenEpisode, outcome: EpisodeOutcome | None) -> dict[str, object]:
    usage = outcome.usage if outcome else Usage()
    cost = episode_cost(
        adapter_id=episode.adapter_id,
        model=episode.model,
        source=episode.source,
        usage=usage,
        at=episode.recorded_at,
        processing="batch" if episode.batch else None,
    )
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost_usd": cost,
    }


def _row(run: str, planned: PlannedEpisode, episode: OpenEpisode, attempt: Attempt) -> ResultRow:
    case = planned.case
    outcome = attempt.outcome
    calls = outcome.calls_per_turn if outcome else []
    kind, etype, status, message = attempt.failure()
    failed = kind is not None
    # At most the calls a row keeps are made records at all (an answer of 300,000 calls must not
    # become 300,000 models); the rest are counted, and `bounded` may keep fewer still.
    kept = [
        CallRecord(turn=t, id=c.id, name=c.name, arguments=c.arguments, parse_error=c.parse_error)
        for t, c in islice(((t, c) for t, turn_calls in enumerate(calls) for c in turn_calls), MAX_ROW_CALLS)
    ]
    answered = sum(len(turn_calls) for turn_calls in calls)
    row = ResultRow(
        run=run,
        case_id=case.id,
        trial=planned.trial,
        category=case.category,
        adapter=episode.adapter_id,
        wire=episode.wire,
        model=episode.model,
        attempt=attempt.number,
        final=attempt.final,
        source=episode.source,
        recorded_at=episode.recorded_at,
        recorded_model=episode.recorded_model,
        correct=None,
        tool_selection_correct=None,
        arguments_correct=None,
        irrelevance=False,
        malformed=False,
        reason=message if failed else None,
        calls=kept,
        dropped_calls=answered - len(kept),
        error_kind=kind,
        error_type=etype,
        error_status=status,
        error_message=message,
        latency_s=round(attempt.latency, 4),
        steps=outcome.steps if outcome else 0,
        started_at=attempt.started,
        text=outcome.final_text if outcome else None,
        refusal=outcome.refusal if outcome else None,
        batch=episode.batch,
        said=outcome.said if outcome else None,
        ended=outcome.ended if outcome else None,
        **_usage(episode, outcome),  # type: ignore[arg-type]
    )
    # Secrets first (a provider may echo a key in any text), then the size bound, then the
    # verdict from the calls the row keeps: what the gate scores again is what was scored.
    scrubber = current_scrubber()
    if scrubber.has_secrets:
        row = ResultRow.model_validate(scrub_value(row.model_dump(), scrubber))
    row = bounded(row)
    verdict = episode_verdict(
        case, stored_turns(row.calls), failed, dropped_calls=row.dropped_calls, said=row.said, ended=row.ended
    )
    reason = verdict.pop("reason")
    if not failed:
        row = with_text(row, "reason", reason)
    return with_schema_validity(row.model_copy(update=verdict), case, judged=not failed)


class Runner:
    def __init__(
        self,
        backend: EpisodeBackend,
        results: ResultsFile,
        settings: RunSettings,
        progress: Progress | None = None,
    ) -> None:
        self.backend = backend
        self.results = results
        self.settings = settings
        self.progress = progress
        self._slots: dict[str, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(settings.concurrency)
        )
        self._limiters: dict[str, AsyncLimiter] = {}
        self._write_lock = asyncio.Lock()

    def pending(self, episodes: Sequence[PlannedEpisode]) -> list[PlannedEpisode]:
        """Episodes without a final row yet (what a resumed run still has to do). An episode
        planned without a model is done when any model's final row exists for it."""
        finals = self.results.final_keys()
        any_model = {(case_id, adapter) for case_id, adapter, _ in finals}
        return [
            planned
            for planned in episodes
            if not (
                (planned.episode_id, planned.adapter_id, planned.model) in finals
                if planned.model
                else (planned.episode_id, planned.adapter_id) in any_model
            )
        ]

    async def run(self, episodes: Sequence[PlannedEpisode]) -> None:
        await asyncio.gather(*(self._guarded(planned) for planned in episodes))

    async def _guarded(self, planned: PlannedEpisode) -> None:
        async with self._slots[planned.adapter_id]:
            await self._episode(planned)

    async def _limit(self, adapter_id: str) -> None:
        if self.settings.rate is None:
            return
        limiter = self._limiters.get(adapter_id)
        if limiter is None:
            limiter = self._limiters[adapter_id] = AsyncLimiter(self.settings.rate, 1.0)
        await limiter.acquire()

    async def _write(self, row: ResultRow) -> None:
        async with self._write_lock:
            self.results.append(row)
        if self.progress is not None and row.final:
            self.progress.advance(row)

    async def _episode(self, planned: PlannedEpisode) -> None:
        started = now_iso()
        try:
            episode = self.backend.open(planned)
        except AdapterFactoryError:  # a plugin's broken factory: no episode of it can run, stop
            raise
        except Exception as exc:  # a backend that cannot even start is a recorded failure
            placeholder = OpenEpisode(
                adapter=_NoAdapter(),
                adapter_id=planned.adapter_id,
                wire="?",
                model=planned.model or "?",
                source="emulated",
            )
            failed = Attempt(
                1, True, None, None, [], 0.0, started, runner_error=f"{type(exc).__name__}: {exc}"
            )
            await self._write(_row(self.results.run_id, planned, placeholder, failed))
            return
        number = self.results.attempts((planned.episode_id, planned.adapter_id, episode.model))
        while True:
            number += 1
            attempt = await self._attempt(planned, episode, number)
            await self._write(_row(self.results.run_id, planned, episode, attempt))
            if attempt.final:
                return
            episode.retry()
            if episode.sleeps:
                delay = backoff_delay(
                    number, attempt.error, base=self.settings.backoff_base, cap=self.settings.backoff_cap
                )
                await asyncio.sleep(delay)

    async def _attempt(self, planned: PlannedEpisode, episode: OpenEpisode, number: int) -> Attempt:
        """Play the episode once; final unless a retryable provider failure has attempts left."""
        started, clock = now_iso(), time.monotonic()
        outcome: EpisodeOutcome | None = None
        error: ProviderError | None = None
        runner_error: str | None = None
        try:
            await self._limit(planned.adapter_id)
            outcome = await play_open(episode, planned.case, timeout=self.settings.episode_timeout)
            error = outcome.error
        except TimeoutError:
            error = ProviderError(
                kind="timeout", message=f"episode exceeded {self.settings.episode_timeout:g}s"
            )
        except Exception as exc:  # our bug must cost one row, never the run
            runner_error = f"{type(exc).__name__}: {exc}"
        latency = time.monotonic() - clock
        problems = replay_problems(episode, error)
        retry = (
            error is not None
            and error.retryable
            and not problems
            and runner_error is None
            and number < self.settings.max_attempts
        )
        if not retry:
            # A recording keeps every deterministic outcome, the provider's refusals and the
            # adapter's own included (replay must reproduce them); never a transient fault.
            succeeded = runner_error is None and not problems and (error is None or not error.retryable)
            problems = unique([*problems, *episode.finish(succeeded)])
        return Attempt(number, not retry, outcome, error, problems, latency, started, runner_error)


async def play_open(
    episode: OpenEpisode, case: Case, *, timeout: float, stream: bool | None = None
) -> EpisodeOutcome:
    """Play an opened episode once, within `timeout` seconds: its transport (its cassette, in a
    replay) bound around this task, so the run's shared adapter sends this episode's requests
    there. `stream`: as the episode says unless given (`xpeval cassettes check` streams as the
    recording did). The one way `xpeval run` and `xpeval cassettes check` play an episode."""
    with bound(episode.transport):
        return await asyncio.wait_for(
            play_case(
                episode.adapter,
                case,
                episode.model,
                stream=episode.stream if stream is None else stream,
                adapter_id=episode.adapter_id,
                switch=episode.switch,
            ),
            timeout=timeout,
        )


def replay_problems(episode: OpenEpisode, error: ProviderError | None) -> list[str]:
    """Replay problems so far: unmatched requests, and a recorded response that no longer decodes
    (in a replay that is the cassette's fault, never the model's)."""
    problems = episode.problems()
    fault = None if problems else recording_fault(episode.replayed_from, error)
    return [*problems, fault] if fault else problems


def unique(items: list[str]) -> list[str]:
    """`items` without repeats, in their first order."""
    return list(dict.fromkeys(items))


class _NoAdapter:
    """Stands in for an adapter that could not be built (its row records why)."""

    async def turn(self, request: TurnRequest) -> TurnResult:
        raise RuntimeError("no adapter")
