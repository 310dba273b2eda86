"""Where an episode's requests go, and the label every result row carries because of it.

Three targets: the real `provider` (source `live`), the `local-model` server (llama.cpp on
loopback, or the team's own OpenAI-compatible server at a URL), and the `emulator` (answers a
perfect model would give; measures the pipeline only).
Replay goes to the cassette and takes the target it was recorded from out of its metadata, so
the adapter is built the same way and sends the same request as when it was recorded.

Each adapter is built once per run and target (one SDK client, one connection pool); each
episode binds its own transport (cassette, emulator script) around its task
(`xpeval.evals.running.episode_transport`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import httpx2

from xpeval.adapters.adapter import Adapter, AdapterSettings
from xpeval.adapters.registry import create_adapter, effective_contract, provider_of
from xpeval.errors import UserError
from xpeval.evals.cases import Case
from xpeval.evals.cassettes import CassetteStore, Mode, Source, bind_cassette
from xpeval.evals.cassettes.meta import TARGET_OF_SOURCE, CassetteMeta, case_digest
from xpeval.evals.cassettes.meta import TargetKind as TargetKind
from xpeval.evals.results.rows import REPLAYED_SOURCE, RowSource
from xpeval.evals.running.episode_transport import EpisodeRouter, upstream_pool
from xpeval.evals.running.plan import PlannedEpisode
from xpeval.evals.running.play import AdapterSwitch
from xpeval.evals.running.runner import OpenEpisode
from xpeval.evals.scrub import install_log_filter, scrub_line

TargetChoice = Literal["auto", "provider", "local-model", "emulator"]
SOURCE_OF: dict[TargetKind, Source] = {kind: source for source, kind in TARGET_OF_SOURCE.items()}
StreamPolicy = Literal["never", "always", "alternate"]


def streams(case_id: str, policy: StreamPolicy) -> bool:
    """Whether an episode asks for a streamed response. `alternate` splits the cases by a
    content hash, so every adapter exercises both decode paths, identically on every machine."""
    if policy == "always":
        return True
    if policy == "never":
        return False
    return hashlib.sha256(case_id.encode()).digest()[0] % 2 == 1


class Emulator(Protocol):
    """The loopback emulator as the runner uses it: an upstream transport answering one case."""

    def upstream_for(self, case: Case, adapter_id: str) -> httpx2.AsyncBaseTransport: ...


def build_adapter(
    adapter_id: str,
    kind: TargetKind,
    settings: AdapterSettings,
    text_calls: bool | None = None,
    local_url: str | None = None,
) -> Adapter:
    """The adapter for `kind`: the registry's own for a provider or the emulator (whose
    upstream transport redirects below the cassette, so URLs stay the provider's), the local
    model's rewrite of it for the local server. A replay reads each reply as it was read when
    recorded: `text_calls=False` (a recording made without the local target's parser of calls
    written as text, `CassetteMeta.text_calls`) builds it without that parser. The log filter
    is on every logger an SDK may print a secret through before any adapter sends (live runs
    too, not only those with cassettes).

    The team's own server (`local_url`, or in a replay a model no bundled server serves) gets
    the adapter as a provider would: requests as-is, replies as they come."""
    install_log_filter()
    if kind == "local-model":
        from xpeval.evals.local_model.local_adapters import (
            REPLAY_SERVER_URL,
            create_local_adapter,
            create_server_adapter,
            is_bundled_model,
        )

        if local_url is not None or not is_bundled_model(settings.model):
            adapter = create_server_adapter(adapter_id, local_url or REPLAY_SERVER_URL, settings)
        else:
            adapter = create_local_adapter(adapter_id, settings)
    else:
        adapter = create_adapter(adapter_id, settings)
    if text_calls is False:
        adapter.reply_hook = None
    return adapter


def provider_ready(adapter_id: str) -> bool:
    """Whether the provider can be called for real: its credentials are in the environment
    (read from the provider's data; no client is built)."""
    return provider_of(adapter_id).live_ready()


def local_capable(adapter_id: str) -> bool:
    from xpeval.evals.local_model import local_adapter_ids

    return adapter_id in local_adapter_ids()


@dataclass
class TargetPicker:
    """Chooses the target of each adapter in record and live modes.

    `auto`: the provider where its credentials are set, else the local model where it serves
    the adapter and runs, else the emulator only when `allow_emulator` (an emulated answer
    says nothing about a provider, so it is never a silent fallback).
    """

    choice: TargetChoice = "auto"
    local_model_up: Callable[[str | None], bool] = lambda model: False
    """Whether the local server of a model (None: the default one) runs."""
    allow_emulator: bool = False
    per_adapter: Mapping[str, TargetKind] = field(default_factory=dict)
    """Targets chosen for single adapters (the nightly: the provider for some, the local model
    for others); they win over `choice` and are checked like it."""
    local_url: str | None = None
    """The local-model target is the team's own OpenAI-compatible server at this URL (checked
    with `GET {url}/models`), not the bundled servers."""
    _listed: list[str] | None = field(default=None, repr=False)

    def choice_of(self, adapter_id: str) -> TargetChoice:
        return self.per_adapter.get(adapter_id, self.choice)

    def kind(self, adapter_id: str, models: Sequence[str | None] = (None,)) -> TargetKind:
        choice = self.choice_of(adapter_id)
        if choice != "auto":
            return choice
        if provider_ready(adapter_id):
            return "provider"
        if self._local_capable(adapter_id) and all(self._local_up(m) for m in models):
            return "local-model"
        return "emulator"

    def check(
        self, adapter_ids: Iterable[str], models: dict[str, list[str | None]] | None = None
    ) -> dict[str, TargetKind]:
        """Every adapter's target, or a UserError naming the adapters that have none."""
        models = models or {}
        kinds = {a: self.kind(a, models.get(a) or [None]) for a in adapter_ids}
        chosen = {a: self.choice_of(a) for a in kinds}
        self._check_providers([a for a in kinds if chosen[a] == "provider"])
        self._check_local([a for a in kinds if chosen[a] == "local-model"], models)
        if not self.allow_emulator:
            fallback = [a for a, kind in kinds.items() if kind == "emulator" and chosen[a] == "auto"]
            if fallback:
                raise UserError(
                    f"no real target for {', '.join(fallback)}: no credentials ({_key_hint(fallback)}) and "
                    "no local model serving it; set a key, start `xpeval local-model serve`, or pass "
                    "--allow-emulator (or --target emulator) to check the pipeline only"
                )
        return kinds

    @staticmethod
    def _check_providers(adapter_ids: list[str]) -> None:
        missing = [a for a in adapter_ids if not provider_ready(a)]
        if missing:
            raise UserError(
                f"--target provider: no credentials for {', '.join(missing)} (set the provider's key: "
                f"{_key_hint(missing)}), or use --target auto"
            )

    def _local_capable(self, adapter_id: str) -> bool:
        if self.local_url is None:
            return local_capable(adapter_id)
        from xpeval.evals.local_model.local_adapters import server_url_adapter_ids

        return adapter_id in server_url_adapter_ids()

    def _local_up(self, model: str | None) -> bool:
        if self.local_url is None:
            return self.local_model_up(model)
        if self._listed is None:
            from xpeval.evals.local_model import LocalModelError
            from xpeval.evals.local_model.own_server import served_models

            try:
                self._listed = served_models(self.local_url)
            except LocalModelError:
                self._listed = []
        return model in self._listed

    def _check_local(self, adapter_ids: list[str], models: dict[str, list[str | None]]) -> None:
        if self.local_url is not None:
            self._check_own_server(adapter_ids, models)
            return
        foreign = [a for a in adapter_ids if not local_capable(a)]
        if foreign:
            raise UserError(
                f"--target local-model: the local model server does not serve {', '.join(foreign)} "
                "(its wire or URL shape); choose other --adapters"
            )
        wanted = {m for a in adapter_ids for m in (models.get(a) or [None])}
        _refuse_unbundled(wanted)
        down = sorted(str(m or "the default model") for m in wanted if not self.local_model_up(m))
        if down:
            model = "" if down == ["the default model"] else f" --model {down[0]}"
            raise UserError(
                f"--target local-model: the local model server of {', '.join(down)} is not running "
                f"(start it with: xpeval local-model serve{model})"
            )

    def _check_own_server(self, adapter_ids: list[str], models: dict[str, list[str | None]]) -> None:
        from xpeval.evals.local_model.local_adapters import SERVER_URL_WIRES, server_url_adapter_ids
        from xpeval.evals.local_model.own_server import check_serves

        assert self.local_url is not None
        offered = server_url_adapter_ids()
        foreign = [a for a in adapter_ids if a not in offered]
        if foreign:
            raise UserError(
                f"--local-model-url: {', '.join(foreign)} cannot be sent to your server: only adapters of "
                f"the {', '.join(SERVER_URL_WIRES)} wire that keep a base URL are ({', '.join(offered)}); "
                "choose those with --adapters"
            )
        if adapter_ids:
            check_serves(self.local_url, [m for a in adapter_ids for m in (models.get(a) or [None])])


def _refuse_unbundled(models: Iterable[str | None]) -> None:
    """A model no bundled server serves is one of the team's own server: say how to reach it."""
    from xpeval.evals.local_model.local_adapters import is_bundled_model
    from xpeval.evals.local_model.models import SERVED

    foreign = sorted(str(m) for m in models if not is_bundled_model(m))
    if foreign:
        raise UserError(
            f"--target local-model: no bundled server serves {', '.join(foreign)} (they serve "
            f"{', '.join(m.alias for m in SERVED)}); for your own server's model pass --local-model-url "
            "URL, or set [tool.xpeval] local_model_url"
        )


def _key_hint(adapter_ids: list[str]) -> str:
    names = dict.fromkeys(var for a in adapter_ids for var in provider_of(a).key_vars)
    return ", ".join(names) or "see README"


def describe_target(adapter_id: str, kind: TargetKind, model: str, local_url: str | None = None) -> str:
    """One line saying where an adapter's answers will come from (printed, and written into
    reports: a base URL's credentials never show)."""
    return scrub_line(_target_line(adapter_id, kind, model, local_url))


def _target_line(adapter_id: str, kind: TargetKind, model: str, local_url: str | None) -> str:
    if kind == "local-model" and local_url is not None:
        return f"{adapter_id}: local model at your server {local_url} ({model}), requests sent as-is"
    if kind == "provider":
        provider = provider_of(adapter_id)
        where = provider.base_url() or f"{provider.name}'s API"
        return f"{adapter_id}: live provider {where} (model {model})"
    if kind == "local-model":
        from xpeval.evals.local_model import local_base_url
        from xpeval.evals.local_model.local_adapters import served_model_for

        models = [m.strip() for m in model.split(",")]
        ports = sorted({served_model_for(None, m).port for m in models})
        urls = ", ".join(local_base_url(effective_contract(adapter_id).wire, port) for port in ports)
        return f"{adapter_id}: local model {urls} ({model})"
    return f"{adapter_id}: emulator, a perfect model's answers (pipeline only, says nothing about {model})"


def default_model(adapter_id: str, kind: TargetKind) -> str:
    if kind == "local-model":
        from xpeval.evals.local_model import MODEL_ALIAS

        return MODEL_ALIAS
    return provider_of(adapter_id).default_model


@dataclass
class EpisodeFactory:
    """Opens episodes for the runner in any mode (the runner's `EpisodeBackend`)."""

    mode: Mode
    store: CassetteStore
    picker: TargetPicker
    emulator: Emulator | None = None
    stream_policy: StreamPolicy = "alternate"
    timeout: float = 60.0
    secrets: tuple[str, ...] = ()
    record_flags: tuple[str, ...] = ()
    """What a printed re-record hint adds so that it runs as printed (--case-dir, --cassettes)."""
    refresh: bool = False
    """Record mode: every request goes upstream again and its cassette is rewritten."""
    local_url: str | None = None
    """Record and live: the local-model target is the team's own server at this URL."""
    targets: dict[str, TargetKind] = field(default_factory=dict)
    """Record and live: each adapter's target, decided once before the run (`TargetPicker.check`)."""
    _adapters: dict[tuple[str, TargetKind, str | None, bool], tuple[Adapter, EpisodeRouter]] = field(
        default_factory=dict
    )
    _other_sources: dict[str, set[Source]] = field(default_factory=dict)
    _digests: dict[int, tuple[Case, str]] = field(default_factory=dict)

    def target_of(self, adapter_id: str, recorded: Source | None, model: str | None = None) -> TargetKind:
        if self.mode is Mode.REPLAY:
            if recorded:
                return TARGET_OF_SOURCE[recorded]
            # No cassette yet: its record hint names the target the adapter's other recordings
            # were made with, else the one the model is served by.
            if adapter_id not in self._other_sources:
                self._other_sources[adapter_id] = self.store.sources_of(adapter_id, model)
            others = self._other_sources[adapter_id]
            if len(others) == 1:
                return TARGET_OF_SOURCE[next(iter(others))]
            from xpeval.evals.local_model.models import find_model

            served = find_model(model) is not None and local_capable(adapter_id)
            return "local-model" if served else "provider"
        return self.targets.get(adapter_id) or self.picker.kind(adapter_id)

    def _digest(self, case: Case) -> str:
        """The case's digest, computed once per case of the run (every adapter's episode of a
        case asks for it; the run never edits a case). Kept by identity with the case itself,
        so an id is never reused for another case."""
        known = self._digests.get(id(case))
        if known is None or known[0] is not case:
            known = self._digests[id(case)] = (case, case_digest(case))
        return known[1]

    def adapter(
        self, adapter_id: str, kind: TargetKind, model: str | None = None, text_calls: bool | None = None
    ) -> tuple[Adapter, EpisodeRouter]:
        """The run's one adapter for (adapter, target), built once and shared by its episodes,
        with the router its episodes bind their transports on. Each local model has its own
        server, so its own adapter; `text_calls` as for `build_adapter`."""
        key = (adapter_id, kind, model if kind == "local-model" else None, text_calls is False)
        if key not in self._adapters:
            # Replay never leaves the process; the other modes share one pool per adapter.
            upstream = None if self.mode is Mode.REPLAY or kind == "emulator" else upstream_pool()
            router = EpisodeRouter(upstream)
            settings = AdapterSettings(transport=router, timeout=self.timeout, model=key[2])
            local_url = self.local_url if self.mode is not Mode.REPLAY else None
            adapter = build_adapter(adapter_id, kind, settings, text_calls, local_url)
            self._adapters[key] = (adapter, router)
        return self._adapters[key]

    async def aclose(self) -> None:
        """Close every adapter of the run (and with it its connection pool)."""
        built, self._adapters = list(self._adapters.values()), {}
        for adapter, _ in built:
            await adapter.aclose()

    def open(
        self,
        planned: PlannedEpisode,
        *,
        via: httpx2.AsyncBaseTransport | None = None,
        batch: str | None = None,
    ) -> OpenEpisode:
        """The episode ready to play. `via`, `batch` (a `--batch` run): its upstream requests go
        through `via` (captured for a batch, then answered by it), never streamed, and its
        recording says it came through the Batch API (xpeval's id of the batch: `batch`)."""
        adapter_id, case = planned.adapter_id, planned.case
        contract = effective_contract(adapter_id)
        recorded = None
        if self.mode is Mode.REPLAY and planned.model is not None:
            recorded = self.store.meta(self.store.path(adapter_id, planned.episode_id, planned.model))
        kind = self.target_of(adapter_id, recorded.source if recorded else None, planned.model)
        model = planned.model or default_model(adapter_id, kind)
        upstream = via if via is not None else self._emulated(planned, kind)
        # Replay reads a reply as it was read when recorded (`CassetteMeta.text_calls`).
        adapter, router = self.adapter(adapter_id, kind, model, recorded.text_calls if recorded else None)
        bound = bind_cassette(
            self.store,
            adapter_id,
            planned.episode_id,
            self.mode,
            source=SOURCE_OF[kind],
            model=model,
            secrets=self.secrets,
            upstream=upstream if upstream is not None else router.upstream,
            flags=self.record_flags,
            refresh=self.refresh and self.mode is Mode.RECORD,
            text_calls=adapter.reply_hook is not None,
            case_digest=self._digest(case) if kind == "emulator" else None,
            delivery="batch" if via is not None else "online",
        )
        transport = bound.transport if self.mode is not Mode.LIVE else upstream
        switch = self._switch(case) if kind == "emulator" and self.mode is Mode.LIVE else None
        delivered = _delivered(via, batch, recorded)
        return OpenEpisode(
            adapter=adapter,
            adapter_id=adapter_id,
            wire=contract.wire,
            model=model,
            source=_row_source(self.mode, kind),
            transport=transport,
            recorded_at=recorded.recorded_at.isoformat(timespec="seconds") if recorded else None,
            recorded_model=recorded.model if recorded else None,
            # Batch APIs do not stream: a batched episode, and the replay of its recording, ask for
            # the whole reply (docs/batch.md, "Streamed episodes").
            stream=streams(case.id, self.stream_policy) and delivered is None,
            sleeps=self.mode is not Mode.REPLAY,
            replayed_from=str(bound.cassette_path) if self.mode is Mode.REPLAY else None,
            problems=lambda: bound.unmatched_problems() if bound.has_misses else [],
            finish=lambda succeeded: bound.finish(succeeded=succeeded),
            retry=bound.retry,
            switch=switch,
            batch=delivered,
        )

    def _switch(self, case: Case) -> AdapterSwitch | None:
        """The adapters a live emulated episode hands its conversation to: each answered by the
        emulator from the turn it takes over (none when the emulator cannot start mid-case)."""
        emulator = self.emulator
        upstream_from = getattr(emulator, "upstream_from", None)
        if upstream_from is None:
            return None

        def reach(adapter_id: str, turn: int) -> Adapter:
            settings = AdapterSettings(transport=upstream_from(case, adapter_id, turn), timeout=self.timeout)
            return build_adapter(adapter_id, "emulator", settings)

        return reach

    def _emulated(self, planned: PlannedEpisode, kind: TargetKind) -> httpx2.AsyncBaseTransport | None:
        """The emulator's script for the episode (the emulator target, recording or live)."""
        if kind != "emulator" or self.mode is Mode.REPLAY:
            return None
        if self.emulator is None:
            raise RuntimeError("the emulator target needs a running emulator")
        return self.emulator.upstream_for(planned.case, planned.adapter_id)


def _delivered(
    via: httpx2.AsyncBaseTransport | None, batch: str | None, recorded: CassetteMeta | None
) -> str | None:
    """The batch an episode is answered by (`via` given), "recorded" for the replay of a batch
    recording, None for an episode asked online."""
    if via is not None:
        return batch
    return "recorded" if recorded is not None and recorded.delivery == "batch" else None


def _row_source(mode: Mode, kind: TargetKind) -> RowSource:
    if mode is Mode.REPLAY:
        return REPLAYED_SOURCE[SOURCE_OF[kind]]
    return "live" if kind == "provider" else SOURCE_OF[kind]
