"""A `--batch` run's multi-turn episodes: their turns as successive batches (docs/batch.md).

A multi-turn episode (the agent loop, approvals, environments, a task's simulated user) sends
one request, reads the answer, runs its tools, and sends the next. Batched, it goes round by
round: every episode's next request is captured, all of them go as batches (grouped per Batch
API, adapter and model, split at the limits, exactly as single-turn requests), and when those
have answered each episode is played again from its start, its earlier requests answered by
their batches' answers (each only if its body's sha256 is the one sent), up to the request after
them: the next round's. An episode that sends no further request has ended; it is played once
more over all its answers by the runner, so its row and cassette are an online episode's.

Durable as single-turn batches are, plus one record: each answer of a round is kept in the
results file (`batch_answer`) before its batch's `batch_settled`. A run killed at any point and
started again rebuilds every episode to where it was by replaying those answers (the file is
untrusted input: each answer must belong to a round batch of this run, its episode's rounds
must follow each other from 1, and a replayed request whose digest differs is `batch_mismatch`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import httpx2

from xpeval.adapters.wires.batch import BatchAnswer, BatchRequest
from xpeval.errors import UserError
from xpeval.evals.batch.capture import AnswerTransport, Captured, CapturedRequest, body_digest
from xpeval.evals.batch.session import (
    CAPTURE_TIMEOUT,
    BatchSession,
    _AnswerRunner,
    _Pending,
    _unanswered,
    answers_by_id,
)
from xpeval.evals.results.batch_records import BatchAnswerKept, BatchIntent
from xpeval.evals.results.rows import MAX_ROW_BYTES, now_iso
from xpeval.evals.running.plan import PlannedEpisode
from xpeval.evals.running.runner import play_open
from xpeval.evals.scrub import current_scrubber

Slot = tuple[str, str]
"""An episode of the run: its case (episode id) and adapter."""


def round_custom_id(run: str, slot: Slot, model: str, number: int) -> str:
    """An episode's request of round `number` in a batch: the same for the same run, episode and
    round (a resumed run asks for the same ids), in the form every API accepts."""
    text = "\n".join((run, *slot, model, f"round {number}"))
    return "x" + hashlib.sha256(text.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class Round:
    """One earlier round of an episode: the digest of the request its batch was sent, and the
    answer the batch gave."""

    number: int
    batch: str
    digest: str
    answer: BatchAnswerKept | None


class RoundsTransport(AnswerTransport):
    """Answers an episode's requests with its earlier rounds' answers in order, each only if its
    body is the one its batch was sent; then keeps the next request (`capture`) or, for an
    episode that ended, refuses it (`mismatch`). An episode that ends before it has asked every
    kept round is not the one those rounds were played by: a mismatch too."""

    def __init__(self, rounds: Sequence[Round], *, capture: bool) -> None:
        self.rounds = list(rounds)
        self.capture = capture
        self.captured: CapturedRequest | None = None
        self._mismatch: str | None = None
        self.answered = 0

    @property
    def mismatch(self) -> str | None:
        if self._mismatch is None and self.answered < len(self.rounds) and self.captured is None:
            return f"the episode ended after {self.answered} of its {len(self.rounds)} batched rounds"
        return self._mismatch

    @mismatch.setter
    def mismatch(self, value: str | None) -> None:
        self._mismatch = value

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        if self.answered < len(self.rounds):
            earlier = self.rounds[self.answered]
            if body_digest(body) != earlier.digest or earlier.answer is None:
                self.mismatch = (
                    f"the episode's request {self.answered + 1} is not the one its batch was sent "
                    "(its body changed)"
                )
                raise Captured(self.mismatch)
            self.answered += 1
            return httpx2.Response(
                earlier.answer.status,
                headers={"content-type": "application/json"},
                content=earlier.answer.body.encode("utf-8"),
                request=request,
            )
        if self.capture and self.captured is None:
            self.captured = CapturedRequest(str(request.url), request.url.path, body)
            raise Captured("captured for a batch")
        self.mismatch = f"the episode sent a request after its {len(self.rounds)} batched rounds"
        raise Captured(self.mismatch)


class RoundsSession(BatchSession):
    """Plays multi-turn episodes through Batch APIs, one round (each episode's next request) per
    step; the batches' create, find-again and poll are the single-turn session's."""

    def __init__(self, parent: BatchSession) -> None:
        super().__init__(
            parent.factory,
            parent.results,
            parent.runner_settings,
            parent.settings,
            parent.emulator,
            parent.log,
            parent.rounds,
        )
        self.progress = parent.progress
        self.planned = parent.planned
        self._rounds_of: dict[str, int] = {}

    async def play(
        self,
        episodes: Sequence[PlannedEpisode],
        open_intents: Sequence[BatchIntent],
        submitted: dict[str, str],
    ) -> list[PlannedEpisode]:
        """Play `episodes` (multi-turn, without a final row) round by round until each has its
        final row; `open_intents`: the round batches a stopped run left unsettled. Returns the
        episodes a batch cannot play (a recording already answered their first request)."""
        pending = list(open_intents)
        online: list[PlannedEpisode] = []
        while True:
            for intent in [i for i in pending if i.batch not in submitted]:
                submitted[intent.batch] = await self._reconcile(intent, set(submitted.values()))
            await asyncio.gather(*(self._settle(i, submitted[i.batch]) for i in pending))
            finals = self.results.final_keys()
            gone = {id(p) for p in online}
            active = [p for p in episodes if not _done(p, finals) and id(p) not in gone]
            if not active:
                return online
            captured, ended, fresh_online = await self._next_requests(active)
            online.extend(fresh_online)
            if captured:
                self.log(
                    f"--batch: the next turns of {len(captured)} multi-turn episodes go in round batches "
                    f"({len(ended)} other episodes ended)"
                )
            await self._finish(ended)
            pending = []
            for intent in self._intents(captured):
                submitted[intent.batch] = await self._create(intent, self._requests_of(intent, captured))
                pending.append(intent)
            if not pending:
                return online

    # --- the rounds so far, from the results file ----------------------------------------------

    def _history(self) -> dict[Slot, list[Round]]:
        """Each episode's rounds with a kept answer, checked: in order from 1, each once, each
        answer of a round batch of this run's file (the file is untrusted input)."""
        records = self.results.batches
        requests: dict[str, tuple[BatchIntent, int]] = {}
        for record in records:
            if isinstance(record, BatchIntent) and record.rounds is not None:
                for index, cid in enumerate(record.custom_ids):
                    requests[cid] = (record, index)
        history: dict[Slot, list[Round]] = defaultdict(list)
        for record in records:
            if not isinstance(record, BatchAnswerKept):
                continue
            found = requests.get(record.custom_id)
            if found is None or found[0].batch != record.batch:
                raise UserError(
                    f"--batch: {self.results.path} keeps an answer ({record.custom_id}) no round batch "
                    "of it asked for: not this run's file (move it aside and start afresh)"
                )
            intent, index = found
            assert intent.rounds is not None
            slot = (intent.episodes[index], intent.adapter)
            history[slot].append(Round(intent.rounds[index], intent.batch, intent.digests[index], record))
        for slot, rounds in history.items():
            rounds.sort(key=lambda r: r.number)
            if [r.number for r in rounds] != list(range(1, len(rounds) + 1)):
                raise UserError(
                    f"--batch: {self.results.path} keeps rounds {[r.number for r in rounds]} of {slot[0]} "
                    f"({slot[1]}): not one episode's turns in order (move the file aside and start afresh)"
                )
        return history

    # --- the next round ----------------------------------------------------------------------

    async def _next_requests(
        self, episodes: Sequence[PlannedEpisode]
    ) -> tuple[list[_Pending], list[tuple[PlannedEpisode, list[Round]]], list[PlannedEpisode]]:
        """Each episode's next request (played over its rounds so far), the episodes that sent
        none (ended), and those whose first request no batch can answer (played online)."""
        history = self._history()
        captured: list[_Pending] = []
        ended: list[tuple[PlannedEpisode, list[Round]]] = []
        online: list[PlannedEpisode] = []
        for planned in episodes:
            rounds = history.get((planned.episode_id, planned.adapter_id), [])
            request = await self._play_to_next(planned, rounds)
            if request is None:
                (ended.append((planned, rounds)) if rounds else online.append(planned))
                continue
            captured.append(self._pending(planned, request, len(rounds) + 1))
        return captured, ended, online

    async def _play_to_next(self, planned: PlannedEpisode, rounds: list[Round]) -> CapturedRequest | None:
        transport = RoundsTransport(rounds, capture=True)
        episode = self.factory.open(planned, via=transport, batch="capture")
        try:
            await play_open(episode, planned.case, timeout=CAPTURE_TIMEOUT)
        except Exception:  # the captured request is all this play was for
            pass
        finally:
            episode.finish(False)
        return transport.captured if transport.mismatch is None else None

    def _pending(self, planned: PlannedEpisode, request: CapturedRequest, number: int) -> _Pending:
        api = self._api(planned.adapter_id)
        adapter, _ = self._adapter(planned)
        path = api.line_path(str(getattr(adapter.client, "base_url", "")), request.path)
        slot = (planned.episode_id, planned.adapter_id)
        cid = round_custom_id(self.results.run_id, slot, str(planned.model), number)
        self._rounds_of[cid] = number
        return _Pending(planned, BatchRequest(cid, path, request.body), request.digest)

    async def _capture(
        self, episodes: Sequence[PlannedEpisode]
    ) -> tuple[list[_Pending], list[PlannedEpisode]]:
        """The requests of an intent that was never created, captured again (`_reconcile`)."""
        captured, ended, online = await self._next_requests(episodes)
        return captured, [*(planned for planned, _ in ended), *online]

    def _intents(self, captured: Sequence[_Pending]) -> list[BatchIntent]:
        return [
            intent.model_copy(update={"rounds": [self._rounds_of[cid] for cid in intent.custom_ids]})
            for intent in super()._intents(captured)
        ]

    def _register_scripts(self, intent: BatchIntent) -> None:
        """The emulator target: each request's reply, the case's reply to that round's request."""
        if self.emulator is None or intent.rounds is None:
            return
        for episode_id, cid, number in zip(intent.episodes, intent.custom_ids, intent.rounds, strict=True):
            planned = self._planned(intent, episode_id)
            if self.factory.target_of(planned.adapter_id, None, planned.model) == "emulator":
                self.emulator.register(planned.case, planned.adapter_id, name=cid, reply=number - 1)

    # --- a round's answers ------------------------------------------------------------------

    async def _answer(
        self, intent: BatchIntent, provider_id: str, state: str, detail: str, answers: list[BatchAnswer]
    ) -> dict[str, int]:
        """Keep each answer for the rounds after it (on disk before the batch is settled); a
        request without one ends its episode with an error row of its kind."""
        by_id = answers_by_id(intent, provider_id, answers)
        kept = {r.custom_id for r in self.results.batches if isinstance(r, BatchAnswerKept)}
        finals = self.results.final_keys()
        counts: Counter[str] = Counter()
        for episode_id, cid in zip(intent.episodes, intent.custom_ids, strict=True):
            if (episode_id, intent.adapter, intent.model) in finals or cid in kept:
                counts["done"] += 1
                continue
            answer = by_id.get(cid)
            record = _kept(intent, answer) if answer is not None else None
            if record is not None and answer is not None:
                counts[answer.outcome] += 1
                self.results.append_batch(record, sync=False)  # synced with the settled record
                continue
            if answer is not None and answer.body is not None and answer.outcome in ("succeeded", "errored"):
                kind, message = (
                    "batch_unkept",
                    (
                        f"batch {provider_id}: the answer to round {_round(intent, cid)} is too large to "
                        f"keep for the rounds after it (over {MAX_ROW_BYTES} bytes in the results file)"
                    ),
                )
            else:
                kind, message = _unanswered(answer, state, detail, provider_id)
            counts[kind.removeprefix("batch_")] += 1
            await self._error_row(self._planned(intent, episode_id), intent, kind, message, answer)
        return dict(counts)

    # --- episodes that ended ----------------------------------------------------------------

    async def _finish(self, ended: Sequence[tuple[PlannedEpisode, list[Round]]]) -> None:
        """Play each ended episode once more over all its answers, through the runner: its row and
        cassette are an online episode's (an errored answer's row says `batch_errored`)."""
        by_batch: dict[str, dict[Slot, tuple[AnswerTransport, str | None]]] = defaultdict(dict)
        episodes: dict[str, list[PlannedEpisode]] = defaultdict(list)
        for planned, rounds in ended:
            errored = any(r.answer is not None and r.answer.outcome == "errored" for r in rounds)
            last = rounds[-1].batch
            by_batch[last][(planned.episode_id, planned.adapter_id)] = (
                RoundsTransport(rounds, capture=False),
                "batch_errored" if errored else None,
            )
            episodes[last].append(planned)
        settings = replace(self.runner_settings, max_attempts=1)
        runners = []
        for batch, played in by_batch.items():
            runner = _AnswerRunner(self.factory, self.results, settings, played, batch)
            runner.progress = self.progress
            runners.append(runner.run(episodes[batch]))
        await asyncio.gather(*runners)


def _kept(intent: BatchIntent, answer: BatchAnswer) -> BatchAnswerKept | None:
    """The answer as the results file keeps it, or None when it cannot be kept (no reply, not
    UTF-8 text, or past a row's bound)."""
    if answer.status is None or answer.body is None or answer.outcome not in ("succeeded", "errored"):
        return None
    try:
        # A provider may echo a key back: the file keeps what the run's cassettes keep.
        text = current_scrubber().text(answer.body.decode("utf-8"))
        record = BatchAnswerKept(
            run=intent.run,
            batch=intent.batch,
            custom_id=answer.custom_id,
            outcome="succeeded" if answer.outcome == "succeeded" else "errored",
            status=answer.status,
            body=text,
            error_type=current_scrubber().text(answer.error_type) if answer.error_type else None,
            at=now_iso(),
        )
    except ValueError:  # not UTF-8, too long, or a status no HTTP answer has
        return None
    line = json.dumps(record.model_dump(mode="json"), ensure_ascii=False)
    return record if len(line.encode("utf-8")) < MAX_ROW_BYTES else None


def _round(intent: BatchIntent, cid: str) -> int:
    assert intent.rounds is not None
    return intent.rounds[intent.custom_ids.index(cid)]


def _done(planned: PlannedEpisode, finals: set[tuple[str, str, str]]) -> bool:
    """Whether the episode has its final row (planned without a model: any model's)."""
    if planned.model:
        return (planned.episode_id, planned.adapter_id, planned.model) in finals
    return any(key[:2] == (planned.episode_id, planned.adapter_id) for key in finals)


async def play_rounds(
    session: BatchSession,
    episodes: list[PlannedEpisode],
    open_intents: list[BatchIntent],
    submitted: dict[str, str],
) -> list[PlannedEpisode]:
    """`session`'s multi-turn episodes round by round (`xpeval.evals.batch.session.RoundsPlay`)."""
    return await RoundsSession(session).play(episodes, open_intents, submitted)


__all__ = ["RoundsSession", "play_rounds", "round_custom_id"]
