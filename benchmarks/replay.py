"""Replay cost per interaction: xpeval's cassettes and plain vcrpy, against the raw SDK.

What one "test" pays, as a vcrpy user pays it: open the cassette, send every request of the
episode through the official SDK (each interaction distinct), build each response, close.
Measured in the same run, interleaved round by round so machine load hits every variant alike:

- raw:     the openai SDK over httpx2.MockTransport returning a prepared response (no cassette);
- xpeval:  `bind_cassette(..., Mode.REPLAY)` + the same SDK client over `episode.transport`,
           then `episode.finish()` (which also checks that every interaction was played);
- vcrpy:   `vcr.use_cassette(path, record_mode="none")` with vcrpy's default matchers, the same
           cassette file, the same SDK client.

The SDK client is built once per variant: its first request pays a one-off platform probe
that is no part of replay. Our client reaches each episode's transport through a one-line
switch (the raw client goes through the same switch).

Target: xpeval at most 1.3x raw, for a 1-interaction and a 200-interaction cassette.

Then the whole replay job, as `xpeval run` plays it: every committed cassette through every
adapter (cases, agent loop, scoring, result rows, scorecard, gate), in this process, against
the raw SDK decode of the same recorded interactions (each served from memory to the SDK of its
wire and parsed, plain or streamed as recorded). Reported as CPU per episode; target: the job at
most JOB_TARGET times the raw decode.

Run: `python benchmarks/replay.py [--rounds-1 N] [--rounds-200 N]`; exit status 1 when a
target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import openai
import vcr

from xpeval.adapters.contract import TurnResult
from xpeval.adapters.wires import get_wire
from xpeval.evals.cassettes import CassetteStore, Mode, bind_cassette

TARGET = 1.3
JOB_TARGET = 3.0
REPO = Path(__file__).resolve().parent.parent
ADAPTER = "bench-openai-chat"
MODEL = "gpt-bench"


class Switch(httpx2.AsyncBaseTransport):
    """Hands each request to whichever transport the current test set."""

    def __init__(self) -> None:
        self.target: httpx2.AsyncBaseTransport | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert self.target is not None
        return await self.target.handle_async_request(request)


def prompt(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Question {i}: what is the weather in city number {i}?"}]


def rendered_reply(i: int) -> httpx2.Response:
    body = get_wire("openai-chat").render(TurnResult(text=f"Answer {i}: sunny."), model=MODEL, stream=False)
    return httpx2.Response(body.status, headers=body.headers, content=body.body)


def prepared_reply() -> Callable[[httpx2.Request], httpx2.Response]:
    """The raw baseline's handler: bytes rendered once, only the Response object built per call."""
    body = get_wire("openai-chat").render(TurnResult(text="Answer 0: sunny."), model=MODEL, stream=False)
    return lambda request: httpx2.Response(body.status, headers=body.headers, content=body.body)


async def record(store: CassetteStore, size: int) -> None:
    """Record a `size`-interaction cassette through our own record mode (no network)."""
    answered = iter(range(size))
    upstream = httpx2.MockTransport(lambda request: rendered_reply(next(answered)))
    episode = bind_cassette(
        store, ADAPTER, f"size-{size}", Mode.RECORD, source="emulated", model=MODEL, upstream=upstream
    )
    client = openai.AsyncOpenAI(
        api_key="bench-key-0000", max_retries=0, http_client=httpx2.AsyncClient(transport=episode.transport)
    )
    for i in range(size):
        await client.chat.completions.create(model=MODEL, messages=prompt(i))  # type: ignore[arg-type]
    assert episode.finish() == []


async def timed(run: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one test. The verdict uses CPU time: what replay costs this
    process, not how busy the (shared) machine was meanwhile."""
    cpu, wall = time.process_time(), time.perf_counter()
    await run()
    return time.process_time() - cpu, time.perf_counter() - wall


async def measure(
    store: CassetteStore, size: int, rounds: int, vcrpy_rounds: int
) -> dict[str, tuple[float, float]]:
    """Median (CPU, wall) seconds per interaction for each variant."""
    path = store.path(ADAPTER, f"size-{size}", MODEL)
    switch = Switch()
    client = openai.AsyncOpenAI(
        api_key="bench-key-0000", max_retries=0, http_client=httpx2.AsyncClient(transport=switch)
    )
    vcr_client = openai.AsyncOpenAI(api_key="bench-key-0000", max_retries=0, http_client=httpx2.AsyncClient())
    raw_transport = httpx2.MockTransport(prepared_reply())

    async def raw() -> None:
        switch.target = raw_transport
        for i in range(size):
            await client.chat.completions.create(model=MODEL, messages=prompt(i))  # type: ignore[arg-type]

    async def ours() -> None:
        episode = bind_cassette(store, ADAPTER, f"size-{size}", Mode.REPLAY, source="emulated", model=MODEL)
        switch.target = episode.transport
        for i in range(size):
            await client.chat.completions.create(model=MODEL, messages=prompt(i))  # type: ignore[arg-type]
        problems = episode.finish()
        assert not problems, problems

    async def plain_vcrpy() -> None:
        with vcr.use_cassette(str(path), record_mode="none"):
            for i in range(size):
                await vcr_client.chat.completions.create(model=MODEL, messages=prompt(i))  # type: ignore[arg-type]

    samples: dict[str, list[tuple[float, float]]] = {"raw": [], "xpeval": [], "vcrpy": []}
    for warm in (raw, ours, plain_vcrpy):  # first calls pay imports and the SDK's platform probe
        await warm()
    for round_number in range(rounds):
        samples["raw"].append(await timed(raw))
        samples["xpeval"].append(await timed(ours))
        if round_number < vcrpy_rounds:
            samples["vcrpy"].append(await timed(plain_vcrpy))
    return {
        name: (statistics.median(c for c, _ in values) / size, statistics.median(w for _, w in values) / size)
        for name, values in samples.items()
    }


async def raw_decode_of_committed() -> tuple[float, int]:
    """CPU seconds to let each wire's SDK parse every committed recorded response, and how many."""
    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter, direct_adapter_for_wire, effective_contract
    from xpeval.evals.cassettes import load_cassette
    from xpeval.evals.cassettes.ordered_replay import recorded_response

    store = CassetteStore(REPO / "cassettes")
    current: list[httpx2.Response] = []
    transport = httpx2.MockTransport(lambda request: current.pop())
    clients: dict[str, Any] = {}
    interactions: list[tuple[Any, Any]] = []
    for adapter_id, _model, _case, path in store.iter_cassettes():
        wire = effective_contract(adapter_id).wire
        if wire not in clients:
            clients[wire] = create_adapter(
                direct_adapter_for_wire(wire), AdapterSettings(transport=transport)
            )
        interactions.extend((wire, i) for i in load_cassette(path))
    cpu = time.process_time()
    for wire, interaction in interactions:
        adapter = clients[wire]
        kwargs = adapter.wire.minimal_request("m")
        kwargs["stream"] = adapter.wire.is_stream(interaction.uri, interaction.request_json())
        current.append(recorded_response(interaction))
        await adapter.wire.send(adapter.client, kwargs)
    spent = time.process_time() - cpu
    for adapter in clients.values():
        await adapter.aclose()
    return spent, len(interactions)


def whole_job() -> tuple[float, int]:
    """CPU seconds of the default replay job in this process, and its episodes."""
    from xpeval.evals.running.suite import SuiteConfig, run_suite

    with tempfile.TemporaryDirectory() as folder:
        config = SuiteConfig(
            cassettes=REPO / "cassettes",
            results=Path(folder) / "results.jsonl",
            reports=Path(folder) / "reports",
            baseline=REPO / "reports" / "baseline.json",
        )
        cpu = time.process_time()
        outcome = run_suite(config)
        spent = time.process_time() - cpu
    assert outcome.passed, "the committed replay passes its gate"
    return spent, len(outcome.frame)


async def main(rounds_1: int, rounds_200: int) -> int:
    missed = False
    with tempfile.TemporaryDirectory() as folder:
        store = CassetteStore(Path(folder))
        plans = ((1, rounds_1, rounds_1), (200, rounds_200, max(3, rounds_200 // 4)))
        for size, rounds, vcrpy_rounds in plans:
            await record(store, size)
            medians = await measure(store, size, rounds, vcrpy_rounds)
            (raw, raw_wall), (ours, ours_wall), (plain, plain_wall) = (
                medians["raw"],
                medians["xpeval"],
                medians["vcrpy"],
            )
            ratio = ours / raw
            verdict = "ok" if ratio <= TARGET else f"MISSED (target {TARGET}x)"
            print(
                f"{size:>3} interaction(s), CPU ms/interaction: raw {raw * 1e3:.3f} | "
                f"xpeval {ours * 1e3:.3f} ({ratio:.2f}x) {verdict} | "
                f"vcrpy {plain * 1e3:.3f} ({plain / raw:.2f}x)"
                f"\n    wall ms/interaction: raw {raw_wall * 1e3:.3f} | xpeval {ours_wall * 1e3:.3f} "
                f"({ours_wall / raw_wall:.2f}x) | vcrpy {plain_wall * 1e3:.3f} ({plain_wall / raw_wall:.2f}x)"
            )
            missed = missed or ratio > TARGET
    raw_cpu, interactions = await raw_decode_of_committed()
    job_cpu, episodes = await asyncio.to_thread(whole_job)
    ratio = job_cpu / raw_cpu
    print(
        f"whole replay job: {episodes} episodes, {interactions} interactions; CPU ms/episode: "
        f"xpeval {job_cpu / episodes * 1e3:.2f} | raw SDK decode {raw_cpu / episodes * 1e3:.2f} "
        f"({ratio:.1f}x, target <= {JOB_TARGET:g}x) {'ok' if ratio <= JOB_TARGET else 'MISSED'}"
    )
    missed = missed or ratio > JOB_TARGET
    return 1 if missed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds-1", type=int, default=400, help="tests per variant (1 interaction)")
    parser.add_argument("--rounds-200", type=int, default=12, help="tests per variant (200 interactions)")
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.rounds_1, options.rounds_200)))
