"""Live runs at the bare client's pace: xpeval against a bare AsyncOpenAI client, same server.

A loopback OpenAI-compatible server (its own process, asyncio, HTTP/1.1 keep-alive) answers
every chat completion after a fixed delay. In the same run, at each concurrency level:

- bare:   one `openai.AsyncOpenAI` client sending the requests under `asyncio.Semaphore(C)`;
- xpeval: `run_suite(mode=live, target=provider, adapters=openai-compatible, concurrency=C)` over
          the same number of single-turn cases, each one request (results file, scoring, rows).

Throughput is counted by the server (requests / (last answer - first arrival)), the same way
for both; it also counts the TCP connections each variant opened.

Targets: xpeval >= 0.8x the bare client's requests/s at concurrency 50 and >= 0.9x at 1, with no
more TCP connections than requests in flight (plus two). Run:
`python benchmarks/live_overhead.py [--delay 0.1] [--levels 1,10,50,200]`; exit 1 on a miss.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

TARGETS = {1: 0.9, 50: 0.8}
SLACK_CONNECTIONS = 2

SERVER = r"""
import asyncio, json, sys, time
DELAY = float(sys.argv[1])
stats = {"connections": 0, "requests": 0, "first": None, "last": None}
ANSWER = json.dumps({
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "bench",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "convert_units",
        "arguments": "{\"value\": 26.2, \"from_unit\": \"mi\", \"to_unit\": \"km\"}"}}]}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
}).encode()

async def handle(reader, writer):
    stats["connections"] += 1
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *headers = head.decode("latin-1").split("\r\n")
            sizes = [int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:")]
            length = sizes[0] if sizes else 0
            if length:
                await reader.readexactly(length)
            if line.startswith("GET /stats"):
                body = json.dumps(stats).encode()
            elif line.startswith("POST /reset"):
                stats.update(connections=1, requests=0, first=None, last=None)
                body = b"{}"
            else:
                stats["requests"] += 1
                stats["first"] = stats["first"] or time.monotonic()
                await asyncio.sleep(DELAY)
                body = ANSWER
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            await writer.drain()
            if not line.startswith(("GET /stats", "POST /reset")):
                stats["last"] = time.monotonic()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
"""

CASE = """
  - id: bench_{i:05d}
    category: simple
    tools: [*convert_units]
    messages:
      - {{role: user, content: "Question {i}: convert 26.2 miles to kilometers."}}
    expected:
      calls:
        - name: convert_units
          arguments: {{value: [26.2], from_unit: ["mi"], to_unit: ["km"]}}
"""
TOOLS = """x-tools:
  convert_units: &convert_units
    name: convert_units
    description: Convert a quantity between units of the same kind.
    parameters:
      type: object
      properties:
        value: {type: number}
        from_unit: {type: string, enum: [m, km, mi, ft]}
        to_unit: {type: string, enum: [m, km, mi, ft]}
      required: [value, from_unit, to_unit]
cases:
"""


def stats(base: str) -> dict[str, float]:
    result: dict[str, float] = httpx2.get(f"{base}/stats", timeout=10).json()
    return result


def reset(base: str) -> None:
    httpx2.post(f"{base}/reset", timeout=10)


def throughput(measured: dict[str, float]) -> float:
    return measured["requests"] / max(measured["last"] - measured["first"], 1e-9)


async def bare(base: str, requests: int, concurrency: int) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="bench", max_retries=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await client.chat.completions.create(
                model="bench",
                messages=[{"role": "user", "content": f"Question {i}: convert 26.2 miles to km."}],
            )

    await asyncio.gather(*(one(i) for i in range(requests)))
    await client.close()


def xpeval(base: str, requests: int, concurrency: int, folder: Path) -> None:
    from xpeval.evals.cassettes import Mode
    from xpeval.evals.running.suite import SuiteConfig, run_suite

    cases = folder / f"cases-{requests}"
    cases.mkdir(exist_ok=True)
    (cases / "bench.yaml").write_text(TOOLS + "".join(CASE.format(i=i) for i in range(requests)))
    os.environ["OPENAI_COMPATIBLE_BASE_URL"] = f"{base}/v1"
    outcome = run_suite(
        SuiteConfig(
            mode=Mode.LIVE,
            target="provider",
            adapters=("openai-compatible",),
            case_dir=cases,
            stream="never",
            concurrency=concurrency,
            retries=0,
            results=folder / f"results-{requests}-{concurrency}.jsonl",
            reports=folder / "reports",
            baseline=folder / "no-baseline.json",
        )
    )
    assert len(outcome.frame) == requests and not outcome.frame["error"].any(), "every request answered"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--levels", default="1,10,50,200")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.delay)], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    base = f"http://127.0.0.1:{server.stdout.readline().strip()}"
    ok = True
    try:
        with tempfile.TemporaryDirectory() as folder:
            print(f"server answers after {args.delay * 1000:.0f} ms")
            print("concurrency  requests  bare req/s  xpeval req/s  ratio  target  connections bare/xpeval")
            for level in (int(x) for x in args.levels.split(",")):
                requests = max(40, 10 * level) if level > 1 else 40
                reset(base)
                started = time.perf_counter()
                asyncio.run(bare(base, requests, level))
                bare_stats = stats(base)
                reset(base)
                xpeval(base, requests, level, Path(folder))
                ours = stats(base)
                ratio = throughput(ours) / throughput(bare_stats)
                target = TARGETS.get(level)
                connections_ok = ours["connections"] - 1 <= level + SLACK_CONNECTIONS
                met = (target is None or ratio >= target) and connections_ok
                ok = ok and met
                print(
                    f"{level:>11}  {requests:>8}  {throughput(bare_stats):>10.0f}  "
                    f"{throughput(ours):>12.0f}  "
                    f"{ratio:>5.2f}  {'>= ' + str(target) if target else '-':>6}  "
                    f"{int(bare_stats['connections']) - 1:>5}/{int(ours['connections']) - 1:<5}"
                    f"{'' if met else '  MISSED'}  ({time.perf_counter() - started:.1f} s)"
                )
    finally:
        server.terminate()
        server.wait()
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
