"""One (adapter, case) cassette in use, bound to one adapter through its injected transport.

vcrpy's `use_cassette` patches httpx2's transport classes for the whole process, which breaks
when the runner replays many cassettes at once in asyncio tasks. Here a cassette is bound to a
single adapter instead: `CassetteTransport` is the httpx2 transport handed to that adapter's SDK
client (`AdapterSettings(transport=bound.transport)`), and it runs vcrpy's own request
handler (`vcr_handle_async_request`) around one `IndexedCassette`.

Rules enforced:
- replay never reaches the network: there is no upstream transport, and a request with no
  recorded answer raises `CassetteMiss` inside the transport (the SDK reports a connection
  error; `BoundCassette.has_misses` tells the runner it is a cassette problem, not a provider fault);
- `finish()` in replay lists every unmatched request (with a diff against the closest recorded
  one and the command that records it) and every recorded interaction left unplayed;
- `finish(succeeded=True)` in record mode saves the episode scrubbed, with its metadata,
  atomically, and only when it is new or changed; a failed episode writes nothing.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.record_mode import RecordMode
from vcr.request import Request as VcrRequest
from vcr.stubs.httpx_stubs import vcr_handle_async_request

from xpeval.adapters import connection_pool
from xpeval.adapters.contract import ProviderError
from xpeval.errors import CassetteError
from xpeval.evals.cassettes.cassette import IndexedCassette, load_recording
from xpeval.evals.cassettes.matching import RequestKey, closest, describe, request_diff, requests_fingerprint
from xpeval.evals.cassettes.meta import META_KEY, TARGET_OF_SOURCE, CassetteMeta, Delivery, Mode, Source
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.scrub import Scrubber, install_log_filter, known_secrets
from xpeval.evals.version import xpeval_version


def record_command(
    adapter_id: str,
    episode_id: str,
    *,
    model: str | None = None,
    source: Source | None = None,
    flags: Sequence[str] = (),
) -> str:
    """The exact command that (re-)records one episode's cassette, runnable as printed: the
    target it was recorded from, its model, and `flags` (the run's --case-dir, --cassettes)."""
    from xpeval.evals.results.run_plan import split_episode_id

    case, trial = split_episode_id(episode_id)
    parts = ["xpeval", "run", "--mode", "record", "--adapters", adapter_id, "--cases", case]
    if trial:
        parts += ["--repeat", str(trial + 1)]
    if model:
        parts += ["--models", f"{adapter_id}={model}"]
    if source:
        parts += ["--target", TARGET_OF_SOURCE[source]]
    parts += list(flags)
    return " ".join(shlex.quote(part) for part in parts)


def hint_flags(*, case_dir: Path | None, cassettes: Path, root: Path) -> tuple[str, ...]:
    """The flags a printed `xpeval run --mode record ...` hint needs to run as printed: the case
    folder when it is not the built-in set, the cassette folder when it is not `<root>/cassettes`."""
    flags: list[str] = []
    if case_dir is not None:
        flags += ["--case-dir", str(case_dir)]
    if cassettes.resolve() != (root / "cassettes").resolve():
        flags += ["--cassettes", str(cassettes)]
    return tuple(flags)


class CassetteMiss(Exception):
    """A replayed request with no recorded answer. A cassette problem: never retry it."""


@dataclass(frozen=True)
class _Miss:
    ordinal: int
    key: RequestKey
    closest: tuple[int, RequestKey] | None


async def _forward(transport: CassetteTransport, request: httpx2.Request) -> httpx2.Response:
    """vcrpy's "real" handler: the upstream transport (record mode), never the network in replay."""
    if transport.upstream is None:
        raise CassetteMiss(f"{request.method} {request.url.path}: no upstream in replay")
    return await transport.upstream.handle_async_request(request)


class _ReplayView:
    """What vcrpy's handler reads from a request it will not forward (replay): method, URL, body
    stream, and the headers as a plain dict. vcrpy copies headers key by key, and each lookup
    scans an httpx2 Headers: a dict makes that copy linear (about 40 us saved per request)."""

    __slots__ = ("headers", "method", "stream", "url")

    def __init__(self, request: httpx2.Request) -> None:
        self.method = request.method
        self.url = request.url
        self.stream: Any = request.stream
        self.headers = dict(request.headers.items())


class CassetteTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that answers from one cassette (and records through `upstream`)."""

    def __init__(
        self, bound: BoundCassette, cassette: IndexedCassette, upstream: httpx2.AsyncBaseTransport | None
    ) -> None:
        self.bound = bound
        self.cassette = cassette
        self.upstream = upstream
        self._handle = vcr_handle_async_request(cassette, _forward, httpx2)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bound.requests_seen += 1
        seen = request if self.upstream is not None else _ReplayView(request)
        try:
            response: httpx2.Response = await self._handle(self, seen)
        except CannotOverwriteExistingCassetteException as exc:
            raise CassetteMiss(self.bound.note_miss(exc.failed_request)) from None
        return response

    async def aclose(self) -> None:
        if self.upstream is not None:
            await self.upstream.aclose()


class _RefusingTransport(httpx2.AsyncBaseTransport):
    """Replay without a usable cassette (absent or unreadable): every request is a miss."""

    def __init__(self, bound: BoundCassette) -> None:
        self.bound = bound

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bound.requests_seen += 1
        self.bound.requests_without_cassette += 1
        raise CassetteMiss(f"{self.bound.cassette_path}: {self.bound.open_problem}")


class BoundCassette:
    """One (adapter, case) cassette in use. Create with `bind_cassette`."""

    transport: httpx2.AsyncBaseTransport | None
    cassette_path: Path | None

    def __init__(
        self,
        *,
        adapter_id: str,
        episode_id: str,
        mode: Mode,
        source: Source,
        model: str,
        cassette_path: Path | None,
        flags: Sequence[str] = (),
        text_calls: bool = False,
        case_digest: str | None = None,
        delivery: Delivery = "online",
    ) -> None:
        self.adapter_id = adapter_id
        self.episode_id = episode_id
        self.mode = mode
        self.source = source
        self.model = model
        self.cassette_path = cassette_path
        self.flags = tuple(flags)
        """Flags the re-record hint needs beyond adapter, case, model and target (--case-dir...)."""
        self.text_calls = text_calls
        """Whether the adapter reads calls written as text (saved in the metadata)."""
        self.case_digest = case_digest
        """An emulated episode: the digest of the case its answers are rendered from (saved)."""
        self.delivery: Delivery = delivery
        """How its responses were asked for (saved): online, or through a Batch API."""
        self.transport = None
        self.cassette: IndexedCassette | None = None
        self.open_problem: str | None = None
        self.requests_seen = 0
        self.requests_without_cassette = 0
        self._misses: list[_Miss] = []
        self._replaced_meta = False
        self._result: list[str] | None = None

    @property
    def record_command(self) -> str:
        return record_command(
            self.adapter_id, self.episode_id, model=self.model, source=self.source, flags=self.flags
        )

    @property
    def has_misses(self) -> bool:
        """Whether a request found no recorded answer (a cassette problem, not a provider fault)."""
        return bool(self._misses) or self.requests_without_cassette > 0

    def note_miss(self, request: VcrRequest) -> str:
        """Remember an unanswered request; the short message raised inside the transport."""
        assert self.cassette is not None
        key = self.cassette.key_of(request)
        unplayed = set(self.cassette.unplayed_positions())
        candidates = [(i, k) for i, k in enumerate(self.cassette.keys) if i in unplayed] or list(
            enumerate(self.cassette.keys)
        )
        miss = _Miss(ordinal=self.requests_seen, key=key, closest=closest(key, candidates))
        self._misses.append(miss)
        return f"{self.cassette_path}: no recorded response for {describe(key)} (see the episode's problems)"

    def retry(self) -> None:
        """Record mode: the next attempt starts over (see `IndexedCassette.rewind`), so a fault
        mid-episode never leaves the failed attempt's interactions in the recording."""
        if self.mode is Mode.RECORD and self.cassette is not None:
            self.cassette.rewind()

    # --- finishing ----------------------------------------------------------------------

    def finish(self, *, succeeded: bool = True) -> list[str]:
        """Replay: the problems found (empty when the cassette was replayed exactly). Record: save
        the episode if it succeeded and is new or changed. Calling it again changes nothing."""
        if self._result is None:
            if self.mode is Mode.REPLAY:
                self._result = self._replay_problems()
            elif self.mode is Mode.RECORD:
                self._result = self._save() if succeeded else []
            else:
                self._result = []
        return list(self._result)

    def _replay_problems(self) -> list[str]:
        return self.unmatched_problems() + self.unplayed_problems()

    def unmatched_problems(self) -> list[str]:
        """Replay: the cassette is unusable, or requests found no recorded answer."""
        if self.open_problem is not None:
            return [f"{self.cassette_path}: {self.open_problem}; record it with: {self.record_command}"]
        return [self._describe_miss(miss) for miss in self._misses]

    def unplayed_problems(self) -> list[str]:
        """Replay: recorded interactions never requested (those a miss was compared with aside)."""
        if self.cassette is None or self.open_problem is not None:
            return []
        explained = {m.closest[0] for m in self._misses if m.closest is not None}
        return [
            f"{self.cassette_path}: recorded interaction {position} "
            f"({describe(self.cassette.keys[position])}) was never requested: the adapter no longer "
            f"sends it; record it with: {self.record_command}"
            for position in self.cassette.unplayed_positions()
            if position not in explained
        ]

    def _describe_miss(self, miss: _Miss) -> str:
        assert self.cassette is not None
        lines = [
            f"{self.cassette_path}: request {miss.ordinal} ({describe(miss.key)}) matches no recorded "
            "interaction"
        ]
        if miss.closest is None:
            lines.append("  the cassette records no interaction at all")
        else:
            position, recorded = miss.closest
            if recorded == miss.key:
                lines.append(
                    f"  it is identical to recorded interaction {position}, already played: "
                    "the adapter sent it more often than recorded"
                )
            else:
                lines.append(f"  closest recorded request: interaction {position}")
                diff = request_diff(recorded, miss.key, f"recorded #{position}")
                lines.extend("  " + line for line in diff)
        lines.append(f"  record it with: {self.record_command}")
        return "\n".join(lines)

    def _save(self) -> list[str]:
        cassette = self.cassette
        assert cassette is not None and self.cassette_path is not None
        used = list(cassette.sequence)
        unchanged = (
            not self._replaced_meta
            and not cassette.dirty
            and sorted(used) == list(range(cassette.loaded_count))
            and self.cassette_path.exists()
        )
        if unchanged:
            return []
        keys = [cassette.keys[i] for i in used]
        meta = CassetteMeta(
            source=self.source,
            model=self.model,
            recorded_at=datetime.now(UTC),
            adapter=self.adapter_id,
            case=self.episode_id,
            xpeval_version=xpeval_version(),
            fingerprint=requests_fingerprint(keys),
            text_calls=self.text_calls,
            case_digest=self.case_digest if self.source == "emulated" else None,
            delivery=self.delivery,
        )
        try:
            cassette.save_interactions(used, {META_KEY: meta.model_dump(mode="json")})
        except OSError as exc:
            return [f"{self.cassette_path}: could not save the recording: {exc.strerror or exc}"]
        return []


def _existing_for_record(
    path: Path, source: Source, model: str, text_calls: bool, digest: str | None
) -> tuple[Any, bool]:
    """(recording to extend, whether metadata is replaced) for record mode.

    An episode extends its old recording only when that was made from the same source and
    model, read the same way (`CassetteMeta.text_calls`) and, for the emulator, rendered from
    the same case; otherwise (or when unreadable, or without metadata) it is recorded afresh, so
    one cassette never mixes responses from two origins and an edited case's emulated answers
    are never kept.
    """
    try:
        recording = load_recording(path)
    except CassetteError:
        return None, True
    if recording is None:
        return None, True
    raw = recording.metadata.get(META_KEY)
    if not isinstance(raw, dict) or raw.get("source") != source or raw.get("model") != model:
        return None, True
    if bool(raw.get("text_calls", False)) != text_calls:
        return None, True
    if source == "emulated" and _case_changed(raw.get("case_digest"), digest):
        return None, True
    return recording, False


def _case_changed(recorded: object, digest: str | None) -> bool:
    """Whether an emulated recording was rendered from another case than `digest`'s (a recording
    made before digests were kept cannot tell, and is taken as it is)."""
    return isinstance(recorded, str) and digest is not None and recorded != digest


def bind_cassette(
    store: CassetteStore,
    adapter_id: str,
    episode_id: str,
    mode: Mode | str,
    *,
    source: Source,
    model: str,
    secrets: Sequence[str] = (),
    upstream: httpx2.AsyncBaseTransport | None = None,
    refresh: bool = False,
    flags: Sequence[str] = (),
    text_calls: bool = False,
    case_digest: str | None = None,
    delivery: Delivery = "online",
) -> BoundCassette:
    """Bind the cassette of (adapter, case) to a transport for one episode.

    Record mode replays the requests its cassette already answers and records the rest, so an
    unchanged episode is left as it was; `refresh=True` sends every request upstream and
    rewrites the cassette (a nightly that wants fresh answers).

    `secrets` are scrubbed from everything recorded (in record mode, credential-looking
    environment variables are added). `upstream` is where record mode sends requests (default:
    the network through `connection_pool()`; the emulator passes its own); replay
    never uses one. `text_calls`: the adapter reads calls written as text (kept in the metadata).
    `case_digest`: the digest of the case an emulated episode's answers are rendered from
    (kept; in replay, a recording of another case is refused as "changed since recorded").
    """
    mode = Mode(mode)
    path = None if mode is Mode.LIVE else store.path(adapter_id, episode_id, model)
    bound = BoundCassette(
        adapter_id=adapter_id,
        episode_id=episode_id,
        mode=mode,
        source=source,
        model=model,
        cassette_path=path,
        flags=flags,
        text_calls=text_calls,
        case_digest=case_digest,
        delivery=delivery,
    )
    if path is None:
        return bound
    install_log_filter()
    if mode is Mode.REPLAY:
        # Nothing is written in replay: the explicit secrets only keep matching and problem texts
        # in step with recordings (scanning the environment here would double a small replay's cost).
        scrubber = Scrubber(secrets)
        try:
            recording = load_recording(path)
        except CassetteError as exc:
            bound.open_problem = f"cannot read the cassette ({exc})"
            bound.transport = _RefusingTransport(bound)
            return bound
        if recording is None:
            bound.open_problem = f"no cassette for adapter {adapter_id} and case {episode_id}"
            bound.transport = _RefusingTransport(bound)
            return bound
        raw = recording.metadata.get(META_KEY)
        raw = raw if isinstance(raw, dict) else {}
        if raw.get("source") == "emulated" and _case_changed(raw.get("case_digest"), case_digest):
            bound.open_problem = (
                f"case {episode_id} changed since it was recorded (the emulator's answers were "
                "rendered from the case as it was then)"
            )
            bound.transport = _RefusingTransport(bound)
            return bound
        bound.cassette = IndexedCassette(
            path, record_mode=RecordMode.NONE, scrubber=scrubber, recording=recording
        )
        bound.transport = CassetteTransport(bound, bound.cassette, upstream=None)
        return bound
    scrubber = Scrubber([*secrets, *known_secrets()])
    recording, replaced = (
        (None, True) if refresh else _existing_for_record(path, source, model, text_calls, case_digest)
    )
    bound._replaced_meta = replaced
    bound.cassette = IndexedCassette(
        path, record_mode=RecordMode.NEW_EPISODES, scrubber=scrubber, recording=recording
    )
    bound.transport = CassetteTransport(bound, bound.cassette, upstream or connection_pool())
    return bound


def recording_fault(cassette: object, error: ProviderError | None) -> str | None:
    """In a replay, a recorded response that no longer decodes is the cassette's fault (a
    conformance failure), never the model's: the line that says so, or None when `error` is
    not a bad response. The runner and the drift check both judge a replay by this rule."""
    if cassette is None or error is None or not error.bad_response:
        return None
    return (
        f"{cassette}: a recorded response no longer decodes ({error.kind}: {error.message}); record it again"
    )
