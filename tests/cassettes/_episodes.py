"""Recording and replaying one episode through a real adapter, for the cassette tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx2

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ToolCall, TurnRequest, TurnResult, Usage
from xpeval.adapters.registry import create_adapter, effective_contract
from xpeval.adapters.wires import get_wire
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.cassettes import BoundCassette, CassetteStore, Mode, Source, bind_cassette
from xpeval.evals.emulator import Reply, ScriptedTransport

MODEL = "test-model"


def builtin_case(case_id: str) -> Case:
    return next(item.case for item in load_cases() if item.case.id == case_id)


SIMPLE = "calc_simple_01"


def answer(text: str = "It is 42.2 km.", call_name: str | None = "convert_units") -> TurnResult:
    arguments = {"value": 26.2, "from_unit": "mi", "to_unit": "km"}
    calls = [ToolCall(id="call_1", name=call_name, arguments=arguments)] if call_name else []
    return TurnResult(
        text=text, tool_calls=calls, usage=Usage(input_tokens=12, output_tokens=7, total_tokens=19)
    )


def request_for(case: Case, *, stream: bool = False, **changes: Any) -> TurnRequest:
    return case.turn_request(MODEL).model_copy(update={"stream": stream, **changes})


@dataclass
class Played:
    results: list[TurnResult]
    problems: list[str]
    episode: BoundCassette


async def play(
    store: CassetteStore,
    adapter_id: str,
    case: Case,
    mode: Mode,
    requests: Sequence[TurnRequest],
    *,
    upstream: httpx2.AsyncBaseTransport | None = None,
    source: Source = "emulated",
    secrets: Sequence[str] = (),
    succeeded: bool = True,
    settings: dict[str, Any] | None = None,
    refresh: bool = False,
) -> Played:
    """Send `requests` through `adapter_id` bound to the (adapter, case) cassette, then finish."""
    episode = bind_cassette(
        store,
        adapter_id,
        case.id,
        mode,
        source=source,
        model=MODEL,
        secrets=secrets,
        upstream=upstream,
        refresh=refresh,
    )
    adapter = create_adapter(
        adapter_id, AdapterSettings(model=MODEL, transport=episode.transport, **(settings or {}))
    )
    try:
        results = [await asyncio.wait_for(adapter.turn(request), 20) for request in requests]
    finally:
        await adapter.aclose()
    return Played(results, episode.finish(succeeded=succeeded), episode)


def scripted(adapter_id: str, *results: TurnResult) -> ScriptedTransport:
    """An in-memory upstream (no socket) answering in the adapter's wire."""
    wire = get_wire(effective_contract(adapter_id).wire)
    return ScriptedTransport(wire, [Reply(result=result) for result in results])


def record(
    store: CassetteStore,
    adapter_id: str,
    case: Case,
    requests: Sequence[TurnRequest],
    *results: TurnResult,
    **options: Any,
) -> Played:
    upstream = scripted(adapter_id, *(results or [answer()] * len(requests)))
    return asyncio.run(
        play(store, adapter_id, case, Mode.RECORD, requests, upstream=upstream.transport(), **options)
    )


def replay(
    store: CassetteStore, adapter_id: str, case: Case, requests: Sequence[TurnRequest], **options: Any
) -> Played:
    return asyncio.run(play(store, adapter_id, case, Mode.REPLAY, requests, **options))
