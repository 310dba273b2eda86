"""A `--batch` run's batches: captured, recorded, created, found again, polled and answered.

Every step that costs money or could be lost is written down first (docs/batch.md):

1. each batchable episode's request is captured through its own adapter (`capture.py`);
2. per Batch API, adapter and model, the requests are split at the API's limits, and for each
   batch the intent record (what it holds) is on disk before the batch is created; the
   provider's id is on disk before the first poll;
3. a run started again reads those records: a batch with an id is polled again, a batch with
   only an intent is looked for among the provider's batches (OpenAI: by the metadata xpeval
   gave it; Anthropic: by its request count since the intent) and created only when it is not
   there, so no request is submitted twice;
4. polls back off (doubling from `poll_first` to `poll_cap`); an ended batch's answers are matched
   to its requests by custom id whatever their order; each episode is then played over its
   answer, so it is decoded, scored and recorded like an online answer, and a request without
   a reply is an error row of its kind (`batch_expired`, `batch_cancelled`, `batch_missing`,
   `batch_failed`; a provider's error answer `batch_errored`). Then the batch is settled.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar, runtime_checkable

import httpx2

from xpeval.adapters.registry import effective_contract
from xpeval.adapters.wires.batch import (
    BatchAnswer,
    BatchApi,
    BatchRequest,
    BatchStatus,
    batch_api,
    batch_api_of,
)
from xpeval.errors import UserError
from xpeval.evals.batch.capture import AnswerTransport, CapturedRequest, CaptureTransport
from xpeval.evals.batch.groups import split
from xpeval.evals.cases.model import Case, is_multi_step
from xpeval.evals.results.batch_records import BatchIntent, BatchSettled, BatchSubmitted
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import EpisodeKey, ResultRow, now_iso
from xpeval.evals.running.episode_transport import bound
from xpeval.evals.running.plan import PlannedEpisode
from xpeval.evals.running.play import play_case
from xpeval.evals.running.runner import Attempt, OpenEpisode, Progress, Runner, RunSettings, _row
from xpeval.evals.running.targets import EpisodeFactory

Log = Callable[[str], None]
T = TypeVar("T")

POLL_FIRST = 30.0
POLL_CAP = 600.0
"""Seconds between polls of a batch: doubling from the first to the cap (a batch takes minutes
to hours; a poll is one small request)."""
FIND_SLACK = 300.0
"""A batch found again after a crash was created at most this long before its intent's clock
reading (the provider's clock and ours differ)."""
CAPTURE_TIMEOUT = 60.0
POLL_FAILURES = 5


@runtime_checkable
class BatchEmulator(Protocol):
    """The emulator target as a batch run uses it (`CaseEmulator`)."""

    def register(
        self, case: Case, adapter_id: str, name: str | None = None, *, reply: int | None = None
    ) -> str: ...

    def batch_transport(self) -> httpx2.AsyncBaseTransport: ...


RoundsPlay = Callable[
    ["BatchSession", list[PlannedEpisode], list[BatchIntent], dict[str, str]], Awaitable[list[PlannedEpisode]]
]
"""Plays multi-turn episodes' turns as successive batches, given the session, the episodes, the
round batches a stopped run left open and every batch's provider id; returns the episodes to
play online (`xpeval.evals.batch.rounds.play_rounds`; without it they all play online)."""


def plays_in_rounds(case: Case) -> bool:
    """Whether a batch run plays the case's turns as successive batches: a multi-turn case whose
    turns stay with one adapter (a handoff reaches another adapter mid-episode: online)."""
    return is_multi_step(case.category) and all(turn.adapter is None for turn in case.turns)


@dataclass(frozen=True)
class BatchSettings:
    poll_first: float = POLL_FIRST
    poll_cap: float = POLL_CAP


def custom_id(run: str, key: EpisodeKey) -> str:
    """An episode's id in a batch: the same for the same run and episode (a resumed run asks
    for the same ids), 41 characters of [a-z0-9] (every API's custom id accepts that)."""
    return "x" + hashlib.sha256("\n".join((run, *key)).encode()).hexdigest()[:40]


def batch_tag(run: str, custom_ids: Sequence[str]) -> str:
    """xpeval's id of a batch, from what it holds (kept in the provider's metadata where it can)."""
    return "xb-" + hashlib.sha256("\n".join((run, *custom_ids)).encode()).hexdigest()[:24]


@dataclass
class _Pending:
    planned: PlannedEpisode
    request: BatchRequest
    digest: str


class BatchSession:
    """Plays a run's batchable episodes through Batch APIs; `run` returns the rest (played online)."""

    def __init__(
        self,
        factory: EpisodeFactory,
        results: ResultsFile,
        runner_settings: RunSettings,
        settings: BatchSettings,
        emulator: object | None,
        log: Log,
        rounds: RoundsPlay | None = None,
    ) -> None:
        self.factory = factory
        self.results = results
        self.runner_settings = runner_settings
        self.settings = settings
        self.emulator = emulator if isinstance(emulator, BatchEmulator) else None
        self.log = log
        self.rounds = rounds
        self.progress: Progress | None = None
        self.planned: dict[tuple[str, str], PlannedEpisode] = {}

    # --- which episodes -------------------------------------------------------------------

    def _batchable(self, planned: PlannedEpisode) -> bool:
        kind = self.factory.target_of(planned.adapter_id, None, planned.model)
        wire = effective_contract(planned.adapter_id).wire
        return (
            (
                not is_multi_step(planned.case.category)
                or (self.rounds is not None and plays_in_rounds(planned.case))
            )
            and kind != "local-model"
            and batch_api_of(wire) is not None
        )

    def _say_online(self, online: Sequence[PlannedEpisode]) -> None:
        handoffs = Counter(p.adapter_id for p in online if is_multi_step(p.case.category))
        others = Counter(p.adapter_id for p in online if not is_multi_step(p.case.category))
        for adapter_id, count in sorted(handoffs.items()):
            if batch_api_of(effective_contract(adapter_id).wire) is None:
                others[adapter_id] += count
            else:
                self.log(
                    f"--batch: {count} {adapter_id} multi-turn episodes play online (they hand their "
                    "conversation to another adapter mid-episode)"
                )
        for adapter_id, count in sorted(others.items()):
            self.log(
                f"--batch: {adapter_id} has no Batch API xpeval drives here; its {count} episodes play online"
            )

    # --- the run ----------------------------------------------------------------------------

    async def run(
        self, episodes: Sequence[PlannedEpisode], todo: Sequence[PlannedEpisode]
    ) -> list[PlannedEpisode]:
        """Play the batchable episodes of `todo` (those of `episodes`, the run's plan, without a
        final row yet) through batches; the others are returned, to be played online."""
        batchable = {id(p) for p in todo if self._batchable(p)}
        self._check_usable([p for p in todo if id(p) in batchable])
        online = [p for p in todo if id(p) not in batchable]
        self._say_online(online)
        self.planned = {(p.episode_id, p.adapter_id): p for p in episodes}
        open_intents, submitted = self._recorded()
        multi, in_rounds, open_intents = _apart_rounds(todo, batchable, open_intents)
        held = {(e, i.adapter) for i in open_intents for e in i.episodes}
        fresh = [p for p in todo if id(p) in batchable and (p.episode_id, p.adapter_id) not in held]
        captured, played_online = await self._capture(fresh)
        online.extend(played_online)
        for intent in [i for i in open_intents if i.batch not in submitted]:
            submitted[intent.batch] = await self._reconcile(intent, set(submitted.values()))
        for intent in self._intents(captured):
            submitted[intent.batch] = await self._create(intent, self._requests_of(intent, captured))
            open_intents.append(intent)
        rounds = asyncio.ensure_future(self._rounds(multi, in_rounds, submitted))
        await asyncio.gather(rounds, *(self._settle(i, submitted[i.batch]) for i in open_intents))
        online.extend(rounds.result())
        return online

    def _check_usable(self, batchable: Sequence[PlannedEpisode]) -> None:
        """Stop before anything is captured when an API misses a setting it needs, or would
        refuse the requests it is asked (one line): nothing is paid for that cannot answer."""
        asked: dict[tuple[BatchApi, bool], list[PlannedEpisode]] = {}
        for p in batchable:
            emulated = self.factory.target_of(p.adapter_id, None, p.model) == "emulator"
            asked.setdefault((self._api(p.adapter_id), emulated), []).append(p)
        for (api, emulated), episodes in sorted(
            asked.items(), key=lambda item: (item[0][0].name, item[0][1])
        ):
            problem = api.unusable(emulated) or (None if emulated else _refused_tools(api, episodes))
            if problem is not None:
                raise UserError(f"--batch: {problem}")

    async def _rounds(
        self, episodes: list[PlannedEpisode], open_intents: list[BatchIntent], submitted: dict[str, str]
    ) -> list[PlannedEpisode]:
        if self.rounds is None:
            return []
        return await self.rounds(self, episodes, open_intents, submitted)

    def _recorded(self) -> tuple[list[BatchIntent], dict[str, str]]:
        """The batches the results file holds that are not settled yet, and every recorded
        batch's provider id (a resumed run's)."""
        records = self.results.batches
        settled = {r.batch for r in records if isinstance(r, BatchSettled)}
        open_intents = [r for r in records if isinstance(r, BatchIntent) and r.batch not in settled]
        if open_intents:
            self.log(f"--batch: resuming {len(open_intents)} batches of {self.results.path}")
        return open_intents, {r.batch: r.provider_id for r in records if isinstance(r, BatchSubmitted)}

    async def _capture(
        self, episodes: Sequence[PlannedEpisode]
    ) -> tuple[list[_Pending], list[PlannedEpisode]]:
        """Each episode's one request, or the episode back for the online path (its cassette
        answered it, or its adapter refused to send it: no batch can do better)."""
        captured: list[_Pending] = []
        online: list[PlannedEpisode] = []
        for planned in episodes:
            request = await self._capture_one(planned)
            if request is None:
                online.append(planned)
                continue
            api = self._api(planned.adapter_id)
            adapter, _ = self._adapter(planned)
            key = (planned.episode_id, planned.adapter_id, str(planned.model))
            path = api.line_path(str(getattr(adapter.client, "base_url", "")), request.path)
            captured.append(
                _Pending(
                    planned,
                    BatchRequest(custom_id(self.results.run_id, key), path, request.body),
                    request.digest,
                )
            )
        return captured, online

    async def _capture_one(self, planned: PlannedEpisode) -> CapturedRequest | None:
        capture = CaptureTransport()
        episode = self.factory.open(planned, via=capture, batch="capture")
        try:
            with bound(episode.transport):
                await asyncio.wait_for(
                    play_case(episode.adapter, planned.case, episode.model, stream=False), CAPTURE_TIMEOUT
                )
        except Exception:  # the captured request is all this play was for
            pass
        finally:
            episode.finish(False)
        return capture.requests[0] if len(capture.requests) == 1 else None

    def _intents(self, captured: Sequence[_Pending]) -> list[BatchIntent]:
        groups: dict[tuple[str, str, str], list[_Pending]] = {}
        for item in captured:
            api = self._api(item.planned.adapter_id)
            groups.setdefault((api.name, item.planned.adapter_id, str(item.planned.model)), []).append(item)
        intents = []
        for (api_name, adapter_id, model), items in groups.items():
            api = batch_api(api_name)
            sizes = [api.request_bytes(item.request) for item in items]
            for chunk in split(items, sizes, api.limits):
                if len(chunk) < api.limits.minimum(model):
                    raise UserError(
                        f"--batch: {adapter_id} {model}: {len(chunk)} requests are too few for a batch "
                        f"({api.name} needs at least {api.limits.minimum(model)}); run it without --batch"
                    )
                ids = [item.request.custom_id for item in chunk]
                intents.append(
                    BatchIntent(
                        run=self.results.run_id,
                        batch=batch_tag(self.results.run_id, ids),
                        api=api_name,
                        adapter=adapter_id,
                        model=model,
                        created_after=0.0,
                        episodes=[item.planned.episode_id for item in chunk],
                        custom_ids=ids,
                        digests=[item.digest for item in chunk],
                        at=now_iso(),
                    )
                )
        return intents

    @staticmethod
    def _requests_of(intent: BatchIntent, captured: Sequence[_Pending]) -> list[BatchRequest]:
        by_id = {item.request.custom_id: item.request for item in captured}
        return [by_id[cid] for cid in intent.custom_ids]

    # --- create, find again ---------------------------------------------------------------------

    async def _create(
        self, intent: BatchIntent, requests: list[BatchRequest], *, recorded: bool = False
    ) -> str:
        """Create the batch, its intent on disk first (`recorded`: it is already, from a run that
        was stopped before creating it)."""
        if not recorded:
            intent = intent.model_copy(update={"created_after": time.time(), "at": now_iso()})
            self.results.append_batch(intent)  # on disk before the batch exists
        self._register_scripts(intent)
        api = batch_api(intent.api)
        try:
            provider_id = await self._call(intent, lambda client: api.submit(client, requests, intent.batch))
        except UserError:
            raise
        except Exception as exc:
            if not _refused(exc):  # no answer: it may exist, so it is looked for when the run resumes
                raise UserError(
                    f"--batch: creating batch {intent.batch} ({intent.adapter} {intent.model}) got no answer "
                    f"({type(exc).__name__}: {exc}); start the same run again: it finds the batch if it "
                    "was created, and creates it if not"
                ) from exc
            self.log(f"--batch: {intent.adapter} {intent.model}: the batch was refused: {exc}")
            return f"refused: {type(exc).__name__}: {exc}"  # every episode of it says so
        self.results.append_batch(
            BatchSubmitted(run=intent.run, batch=intent.batch, provider_id=provider_id, at=now_iso())
        )
        self.log(
            f"--batch: {intent.adapter} {intent.model}: batch {provider_id} holds {len(requests)} requests"
        )
        return provider_id

    async def _reconcile(self, intent: BatchIntent, taken: set[str]) -> str:
        """The batch of an intent without a recorded id: found among the provider's batches, or
        created now (the run was killed before it was)."""
        api = batch_api(intent.api)
        found = await self._call(
            intent,
            lambda client: api.find(
                client, intent.batch, len(intent.custom_ids), intent.created_after - FIND_SLACK
            ),
        )
        found = [f for f in found if f not in taken]
        if len(found) > 1:
            raise UserError(
                f"--batch: batch {intent.batch} of {self.results.path} may be any of {', '.join(found)} at "
                f"{intent.api}: cancel the ones that are not this run's and start the run again"
            )
        if found:
            record = BatchSubmitted(
                run=intent.run, batch=intent.batch, provider_id=found[0], adopted=True, at=now_iso()
            )
            self.results.append_batch(record)
            self.log(f"--batch: found batch {found[0]} again (created before the run was stopped)")
            return found[0]
        captured, _ = await self._capture([self._planned(intent, e) for e in intent.episodes])
        requests = [item.request for item in captured]
        if [r.custom_id for r in requests] != intent.custom_ids or [
            c.digest for c in captured
        ] != intent.digests:
            raise UserError(
                f"--batch: batch {intent.batch} of {self.results.path} was never created, and its requests "
                "are not what they were: start the run afresh (move the results file aside)"
            )
        return await self._create(intent, requests, recorded=True)

    # --- poll, answer ---------------------------------------------------------------------------

    async def _settle(self, intent: BatchIntent, provider_id: str) -> None:
        api = batch_api(intent.api)
        answers: list[BatchAnswer] = []
        if provider_id.startswith("refused: "):
            state, detail = "failed", provider_id.removeprefix("refused: ")
        else:
            status = await self._poll(intent, api, provider_id)
            state, detail = status.state, status.detail
            if state != "failed":
                answers = await self._call(intent, lambda client: api.answers(client, provider_id))
        counts = await self._answer(intent, provider_id, state, detail, answers)
        settled = BatchSettled(
            run=intent.run, batch=intent.batch, state=state, detail=detail, counts=counts, at=now_iso()
        )
        self.results.append_batch(settled)

    async def _poll(self, intent: BatchIntent, api: BatchApi, provider_id: str) -> BatchStatus:
        """The batch's status once it is over, polled with backoff; a poll that fails is tried
        again, and `POLL_FAILURES` in a row stop the run (its batches resume with it)."""
        delay, failures = self.settings.poll_first, 0
        while True:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.settings.poll_cap)
            try:
                status: BatchStatus = await self._call(intent, lambda client: api.status(client, provider_id))
            except Exception as exc:
                failures += 1
                if failures >= POLL_FAILURES:
                    raise UserError(
                        f"--batch: batch {provider_id} could not be polled {failures} times in a row "
                        f"({type(exc).__name__}: {exc}); start the same run again to resume it"
                    ) from exc
                continue
            failures = 0
            if status.state != "pending":
                return status

    async def _answer(
        self, intent: BatchIntent, provider_id: str, state: str, detail: str, answers: list[BatchAnswer]
    ) -> dict[str, int]:
        by_id = answers_by_id(intent, provider_id, answers)
        counts: Counter[str] = Counter()
        played: dict[tuple[str, str], tuple[AnswerTransport, str | None]] = {}
        finals = self.results.final_keys()
        for episode_id, cid, digest in zip(intent.episodes, intent.custom_ids, intent.digests, strict=True):
            if (episode_id, intent.adapter, intent.model) in finals:
                counts["done"] += 1
                continue
            planned = self._planned(intent, episode_id)
            answer = by_id.get(cid)
            if answer is not None and answer.status is not None and answer.body is not None:
                counts[answer.outcome] += 1
                relabel = "batch_errored" if answer.outcome == "errored" else None
                played[(episode_id, intent.adapter)] = (
                    AnswerTransport(answer.status, answer.body, digest),
                    relabel,
                )
                continue
            kind, message = _unanswered(answer, state, detail, provider_id)
            counts[kind.removeprefix("batch_")] += 1
            await self._error_row(planned, intent, kind, message, answer)
        if played:
            runner = _AnswerRunner(
                self.factory,
                self.results,
                replace(self.runner_settings, max_attempts=1),
                played,
                intent.batch,
            )
            runner.progress = self.progress
            await runner.run([self._planned(intent, episode_id) for episode_id, _ in played])
        return dict(counts)

    async def _error_row(
        self,
        planned: PlannedEpisode,
        intent: BatchIntent,
        kind: str,
        message: str,
        answer: BatchAnswer | None,
    ) -> None:
        episode = self.factory.open(planned, via=CaptureTransport(), batch=intent.batch)
        episode.finish(False)
        number = self.results.attempts((planned.episode_id, intent.adapter, episode.model)) + 1
        attempt = Attempt(number, True, None, None, [], 0.0, now_iso(), runner_error=message)
        row = _row(self.results.run_id, planned, episode, attempt)
        row = row.model_copy(update={"error_kind": kind, "error_type": answer.error_type if answer else None})
        self.results.append(row)
        if self.progress is not None:
            self.progress.advance(row)

    # --- helpers ----------------------------------------------------------------------------------

    def _planned(self, intent: BatchIntent, episode_id: str) -> PlannedEpisode:
        planned = self.planned.get((episode_id, intent.adapter))
        if planned is None:
            raise UserError(
                f"--batch: batch {intent.batch} of {self.results.path} holds {episode_id} of "
                f"{intent.adapter}, which this run does not plan: not this run's file"
            )
        return planned

    def _api(self, adapter_id: str) -> BatchApi:
        api = batch_api_of(effective_contract(adapter_id).wire)
        assert api is not None
        return api

    def _adapter(self, planned: PlannedEpisode) -> tuple[Any, Any]:
        kind = self.factory.target_of(planned.adapter_id, None, planned.model)
        return self.factory.adapter(planned.adapter_id, kind, planned.model)

    def _register_scripts(self, intent: BatchIntent) -> None:
        """The emulator target: each request's reply, as the script named by its custom id."""
        if self.emulator is None:
            return
        for episode_id, cid in zip(intent.episodes, intent.custom_ids, strict=True):
            planned = self._planned(intent, episode_id)
            if self.factory.target_of(planned.adapter_id, None, planned.model) == "emulator":
                self.emulator.register(planned.case, planned.adapter_id, name=cid)

    async def _call(self, intent: BatchIntent, call: Callable[[Any], Awaitable[T]]) -> T:
        """A Batch API call through the adapter's own SDK client (the emulator's, for its target)."""
        planned = self._planned(intent, intent.episodes[0])
        adapter, _ = self._adapter(planned)
        kind = self.factory.target_of(planned.adapter_id, None, planned.model)
        transport = self.emulator.batch_transport() if kind == "emulator" and self.emulator else None
        with bound(transport):
            return await call(adapter.client)


def _apart_rounds(
    todo: Sequence[PlannedEpisode], batchable: set[int], open_intents: list[BatchIntent]
) -> tuple[list[PlannedEpisode], list[BatchIntent], list[BatchIntent]]:
    """The multi-turn episodes to batch round by round and the round batches a stopped run left
    open, apart from the single-turn ones (the open single-turn batches, third; `batchable`
    keeps only single-turn episodes)."""
    multi = [p for p in todo if id(p) in batchable and is_multi_step(p.case.category)]
    batchable -= {id(p) for p in multi}
    in_rounds = [i for i in open_intents if i.rounds is not None]
    return multi, in_rounds, [i for i in open_intents if i.rounds is None]


def answers_by_id(
    intent: BatchIntent, provider_id: str, answers: Sequence[BatchAnswer]
) -> dict[str, BatchAnswer]:
    """A batch's answers by custom id (the first of each); one for a request the batch never
    held stops the run: the provider's batch is not this run's."""
    by_id: dict[str, BatchAnswer] = {}
    for each in answers:
        by_id.setdefault(each.custom_id, each)
    strangers = sorted(set(by_id) - set(intent.custom_ids))
    if strangers:
        raise UserError(
            f"--batch: batch {provider_id} answers requests batch {intent.batch} never held "
            f"({strangers[0]}, ...): it is not this run's batch"
        )
    return by_id


def _refused_tools(api: BatchApi, episodes: Sequence[PlannedEpisode]) -> str | None:
    """Why `api` cannot take these episodes' requests: they offer tools and it takes none. The
    emulator takes them (it proves the pipeline, not the provider), a provider would fail each."""
    if api.limits.tools:
        return None
    offering = sorted({p.adapter_id for p in episodes if p.case.tools})
    if not offering:
        return None
    count = sum(1 for p in episodes if p.case.tools)
    return (
        f"{api.name}'s batch jobs take no tool calls, and {count} episodes of {', '.join(offering)} "
        "offer tools (docs/batch.md); run them without --batch"
    )


def _refused(exc: Exception) -> bool:
    """Whether the provider answered a create with a client error (4xx: too large, no access,
    invalid): the batch does not exist. Anything else (no answer, 5xx) leaves that open."""
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    return isinstance(status, int) and 400 <= status < 500


def _unanswered(answer: BatchAnswer | None, state: str, detail: str, provider_id: str) -> tuple[str, str]:
    """The error kind and message of a request its batch gave no reply to."""
    if answer is not None and answer.outcome in ("expired", "cancelled"):
        return (
            f"batch_{answer.outcome}",
            f"batch {provider_id}: {answer.outcome}: {answer.message or ''}".rstrip(": "),
        )
    if answer is not None:
        return "batch_errored", f"batch {provider_id}: errored: {answer.message}"
    if state == "failed":
        return "batch_failed", f"batch {provider_id} failed as a whole: {detail}"
    if state in ("expired", "cancelled"):
        return f"batch_{state}", f"batch {provider_id} {state} before answering this request"
    return "batch_missing", f"batch {provider_id} ended ({detail}) without a result for this request"


class _AnswerRunner(Runner):
    """The runner over batch answers: each episode's request answered by its batch's reply,
    once (a batch answer is never retried), its error rows labelled as the batch's."""

    def __init__(
        self,
        factory: EpisodeFactory,
        results: ResultsFile,
        settings: RunSettings,
        played: dict[tuple[str, str], tuple[AnswerTransport, str | None]],
        batch: str,
    ) -> None:
        super().__init__(_AnsweredBackend(factory, played, batch), results, settings)
        self.played = played

    async def _write(self, row: ResultRow) -> None:
        transport, relabel = self.played[(row.key[0], row.adapter)]
        if transport.mismatch is not None:
            row = row.model_copy(
                update={
                    "error_kind": "batch_mismatch",
                    "error_message": transport.mismatch,
                    "reason": transport.mismatch,
                }
            )
        elif relabel is not None and row.error_kind is not None:
            row = row.model_copy(update={"error_kind": relabel})
        await super()._write(row)


@dataclass
class _AnsweredBackend:
    factory: EpisodeFactory
    played: dict[tuple[str, str], tuple[AnswerTransport, str | None]]
    batch: str

    def open(self, planned: PlannedEpisode) -> OpenEpisode:
        transport, _ = self.played[(planned.episode_id, planned.adapter_id)]
        return self.factory.open(planned, via=transport, batch=self.batch)
