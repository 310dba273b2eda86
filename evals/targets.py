"""Where an episode's requests go, and the label every result row carries because of it.

Three targets: the real `provider` (source `live`), the `local-model` server (llama.cpp on
loopback), and the `emulator` (answers a perfect model would give; measures the pipeline only).
Replay goes to the cassette and takes the target it was recorded from out of its metadata, so
the adapter is built the same way and sends the same request as when it was recorded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import httpx2

from adapters.adapter import Adapter, AdapterSettings
from adapters.registry import create_adapter, effective_contract
from evals.cases import Case
from evals.cassettes import CassetteStore, Mode, Source, open_episode
from evals.plan import PlannedEpisode
from evals.results import RowSource
from evals.runner import OpenEpisode

TargetKind = Literal["provider", "local-model", "emulator"]
TargetChoice = Literal["auto", "provider", "local-model", "emulator"]
SOURCE_OF: dict[TargetKind, Source] = {
    "provider": "live",
    "local-model": "local-model",
    "emulator": "emulated",
}
KIND_OF: dict[Source, TargetKind] = {source: kind for kind, source in SOURCE_OF.items()}
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


def build_adapter(adapter_id: str, kind: TargetKind, settings: AdapterSettings) -> Adapter:
    """The adapter for `kind`: the registry's own for a provider or the emulator (whose
    upstream transport redirects below the cassette, so URLs stay the provider's), the local
    model's rewrite of it for the local server."""
    if kind == "local-model":
        from evals.local_model import create_local_adapter

        return create_local_adapter(adapter_id, settings)
    return create_adapter(adapter_id, settings)


@dataclass
class TargetPicker:
    """Chooses the target of each adapter in record and live modes."""

    choice: TargetChoice = "auto"
    local_model_up: Callable[[], bool] = lambda: False

    def kind(self, adapter_id: str) -> TargetKind:
        if self.choice != "auto":
            return self.choice
        if provider_ready(adapter_id):
            return "provider"
        if self.local_model_up() and _local_capable(adapter_id):
            return "local-model"
        return "emulator"


def provider_ready(adapter_id: str) -> bool:
    """Whether the provider can be called for real: its credentials are in the environment."""
    return create_adapter(adapter_id).live_ready


def _local_capable(adapter_id: str) -> bool:
    from evals.local_model import LocalModelError, create_local_adapter

    try:
        create_local_adapter(adapter_id)
    except LocalModelError:
        return False
    return True


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

    def open(self, planned: PlannedEpisode) -> OpenEpisode:
        adapter_id, case = planned.adapter_id, planned.case
        contract = effective_contract(adapter_id)
        recorded = self.store.meta(self.store.path(adapter_id, case.id)) if self.mode is Mode.REPLAY else None
        if self.mode is Mode.REPLAY:
            kind: TargetKind = KIND_OF[recorded.source] if recorded else "provider"
        else:
            kind = self.picker.kind(adapter_id)
        model = planned.model or (recorded.model if recorded else None) or _default_model(adapter_id, kind)
        upstream = None
        if self.mode is Mode.RECORD and kind == "emulator":
            if self.emulator is None:
                raise RuntimeError("the emulator target needs a running emulator")
            upstream = self.emulator.upstream_for(case, adapter_id)
        episode = open_episode(
            self.store,
            adapter_id,
            case.id,
            self.mode,
            source=SOURCE_OF[kind],
            model=model,
            secrets=self.secrets,
            upstream=upstream,
        )
        transport = episode.transport
        if self.mode is Mode.LIVE and kind == "emulator":
            if self.emulator is None:
                raise RuntimeError("the emulator target needs a running emulator")
            transport = self.emulator.upstream_for(case, adapter_id)
        adapter = build_adapter(
            adapter_id, kind, AdapterSettings(model=model, transport=transport, timeout=self.timeout)
        )
        return OpenEpisode(
            adapter=adapter,
            adapter_id=adapter_id,
            wire=contract.wire,
            model=model,
            source=_row_source(self.mode, kind),
            recorded_at=recorded.recorded_at.isoformat(timespec="seconds") if recorded else None,
            recorded_model=recorded.model if recorded else None,
            stream=streams(case.id, self.stream_policy),
            sleeps=self.mode is not Mode.REPLAY,
            problems=lambda: episode.unmatched_problems() if episode.has_misses else [],
            finish=lambda succeeded: episode.finish(succeeded=succeeded),
            retry=episode.retry,
        )


def _default_model(adapter_id: str, kind: TargetKind) -> str:
    if kind == "local-model":
        from evals.local_model import MODEL_ALIAS

        return MODEL_ALIAS
    return create_adapter(adapter_id).default_model


def _row_source(mode: Mode, kind: TargetKind) -> RowSource:
    if kind == "provider":
        return "cassette" if mode is Mode.REPLAY else "live"
    return SOURCE_OF[kind]
