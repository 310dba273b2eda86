"""Memory and results size stay flat when a model answers with megabytes of tool arguments.

A loopback provider answers every episode with one tool call whose argument is `--mb` MB of
text. The real runner plays `--episodes` single-turn episodes against it (live mode, the
emulator target, openai-chat and anthropic-messages, plain responses), each configuration
in its own process so its peak RSS is its own. Baselines measured in the same run:

- the same run with 1 KB arguments (what the pipeline costs without the big answers);
- the same run with a fifth of the episodes (flat means: more episodes, no more memory).

Targets: peak RSS with `--episodes` episodes at most 1.25x the fifth-size run's, and at most
the 1 KB run's plus 64 MB per episode in flight; results file at most 64 KB per row.
Run: `python benchmarks/bounded_rows.py [--episodes N] [--mb M]`; exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

RSS_GROWTH_TARGET = 1.25
PER_IN_FLIGHT_MB = 64.0
"""A 5 MB answer in flight exists several times at once: the emulator's rendered body (it runs in
this process), the bytes read, the SDK's parsed string, the decoded arguments."""
ROW_BYTES_TARGET = 64 * 1024
CONCURRENCY = 2
ADAPTERS = ("openai-chat", "anthropic-messages")


def child(episodes: int, size: int, folder: Path) -> dict[str, float]:
    """One configuration, in this process: returns peak RSS (MB) and results bytes per row."""
    import httpx2

    from xpeval.adapters.contract import ToolCall, TurnResult
    from xpeval.evals.cases import Case, load_cases
    from xpeval.evals.cassettes import CassetteStore, Mode
    from xpeval.evals.emulator import EmulatorServer, Reply
    from xpeval.evals.results.file import ResultsFile
    from xpeval.evals.results.rows import RunHeader
    from xpeval.evals.results.run_plan import RunPlan
    from xpeval.evals.running.plan import PlannedEpisode
    from xpeval.evals.running.runner import Runner, RunSettings
    from xpeval.evals.running.targets import EpisodeFactory, TargetPicker

    singles = [c.case for c in load_cases() if c.case.category in ("simple", "multiple", "irrelevance")]
    planned = [
        PlannedEpisode(singles[i % len(singles)].model_copy(update={"id": f"big_{i:04d}"}), adapter, "m")
        for i in range(episodes // len(ADAPTERS))
        for adapter in ADAPTERS
    ]

    class Big:
        def __init__(self, server: EmulatorServer) -> None:
            self.server = server

        def upstream_for(self, case: Case, adapter_id: str) -> httpx2.AsyncBaseTransport:
            call = ToolCall(id="call_1", name=case.tools[0].name, arguments={"payload": "x" * size})
            return self.server.transport(self.server.script([Reply(result=TurnResult(tool_calls=[call]))]))

    with EmulatorServer() as server:
        factory = EpisodeFactory(
            mode=Mode.LIVE,
            store=CassetteStore(folder / "none"),
            picker=TargetPicker(choice="emulator"),
            emulator=Big(server),
            # A 5 MB streamed answer is 300,000 frames: the emulator, not xpeval, would be measured.
            stream_policy="never",
        )
        header = RunHeader(
            run="bench",
            fingerprint="bench",
            started_at="now",
            config={},
            plan=RunPlan(cases=sorted({p.case.id for p in planned}), models={a: ["m"] for a in ADAPTERS}),
        )
        path = folder / f"results-{episodes}-{size}.jsonl"
        results = ResultsFile.open_for(path, header)
        runner = Runner(factory, results, RunSettings(concurrency=CONCURRENCY, max_attempts=1))

        async def play() -> None:
            try:
                await runner.run(planned)
            finally:
                await factory.aclose()

        asyncio.run(play())
        results.close()
    rows = [r for r in ResultsFile.read(results.path).rows if r.final]
    assert len(rows) == len(planned) and all(r.error_kind is None for r in rows), "every episode answered"
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    peak_mb = int(hwm.split()[1]) / 1024  # this process image's own peak (ru_maxrss survives exec)
    return {"peak_mb": peak_mb, "bytes_per_row": path.stat().st_size / len(rows), "rows": len(rows)}


def measure(episodes: int, size: int, folder: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(episodes), str(size), str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"child run failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=116)
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        episodes, size, where = int(args.child[0]), int(args.child[1]), Path(args.child[2])
        print(json.dumps(child(episodes, size, where)))
        return 0
    big = int(args.mb * 1024 * 1024)
    with tempfile.TemporaryDirectory() as folder:
        small = measure(args.episodes, 1024, Path(folder))
        fifth = measure(max(len(ADAPTERS), args.episodes // 5), big, Path(folder))
        whole = measure(args.episodes, big, Path(folder))
    growth = whole["peak_mb"] / fifth["peak_mb"]
    overhead = whole["peak_mb"] - small["peak_mb"]
    print(
        f"episodes with {args.mb:g} MB arguments: {int(whole['rows'])} (fifth-size run: {int(fifth['rows'])})"
    )
    print(
        f"peak RSS: {whole['peak_mb']:.0f} MB; fifth-size run {fifth['peak_mb']:.0f} MB "
        f"(ratio {growth:.2f}, target <= {RSS_GROWTH_TARGET}); 1 KB arguments {small['peak_mb']:.0f} MB "
        f"(+{overhead:.0f} MB, target <= {PER_IN_FLIGHT_MB * CONCURRENCY * len(ADAPTERS):.0f})"
    )
    print(
        f"results file: {whole['bytes_per_row'] / 1024:.1f} KB per row (1 KB arguments: "
        f"{small['bytes_per_row'] / 1024:.1f} KB; target <= {ROW_BYTES_TARGET / 1024:.0f} KB)"
    )
    ok = (
        growth <= RSS_GROWTH_TARGET
        and overhead <= PER_IN_FLIGHT_MB * CONCURRENCY * len(ADAPTERS)
        and whole["bytes_per_row"] <= ROW_BYTES_TARGET
    )
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
