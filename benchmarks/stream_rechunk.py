"""Streamed = whole at volume: at least 1,000 re-chunkings of recorded streams per wire.

Every recorded 200 stream of every wire with a reframer (the shared corpus's cassettes and new
wires' recordings, and the project's `cassettes/`) is taken round after round, each round with
another seed: its recorded bytes cut at random places and its reply streamed again in another
shape (docs/stream-shapes.md), until each wire has at least `--per-wire` re-chunkings. Each is
decoded through the wire's streaming path and compared with the decode of the whole reply the
stream's frames spell (`xpeval.evals.cassettes.streamed_whole`).

Prints, per wire, the recorded streams, those that spell no whole reply (an error frame, no
terminal event: not re-chunked), the re-chunkings checked and how many differed, then the first
differences. Run: `python benchmarks/stream_rechunk.py [--per-wire N] [--seed S]`; exit 1 on any
difference, and when a wire falls short of N re-chunkings or the corpus is absent (nothing
measured is not a pass).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path
from random import Random

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def cassette_files() -> list[Path]:
    return [
        *sorted(CORPUS.glob("cassettes/*/*.yaml")),
        *sorted(CORPUS.glob("new-wires/*/*.yaml")),
        *sorted(CORPUS.glob("new-wires/*/*.yaml.gz")),
        *sorted((REPO / "cassettes").glob("**/*.yaml")),
    ]


async def measure(per_wire: int, seed: int) -> tuple[dict[str, Counter[str]], list[str]]:
    from xpeval.adapters.wires.reframe import reframer_for
    from xpeval.evals.cassettes.streamed_whole import WireDecoder, check_stream, recorded_streams

    streams = recorded_streams(cassette_files())
    counts: dict[str, Counter[str]] = {}
    shown: list[str] = []
    for wire in sorted({s.wire for s in streams}):
        mine = [s for s in streams if s.wire == wire]
        tally = counts.setdefault(wire, Counter(streams=len(mine)))
        if reframer_for(wire) is None:
            continue
        decoder = WireDecoder(wire)
        try:
            for round_number in range(1_000_000):
                for stream in mine:
                    checks = await check_stream(
                        stream, decoder, Random(f"{seed}/{round_number}/{stream.source}"), 1
                    )
                    if checks is None:
                        tally["no whole reply"] += round_number == 0
                        continue
                    for check in checks:
                        tally["checked"] += 1
                        if check.problems:
                            tally["differed"] += 1
                            if len(shown) < 5:
                                shown.append(
                                    f"{check.source} ({check.how}): " + " | ".join(check.problems)[:1500]
                                )
                if tally["checked"] >= per_wire or not tally["checked"]:
                    break
        finally:
            await decoder.aclose()
    return counts, shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-wire", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not CORPUS.exists():
        print(f"the shared corpus is absent ({CORPUS}): nothing measured", file=sys.stderr)
        return 1
    started = time.perf_counter()
    counts, shown = asyncio.run(measure(args.per_wire, args.seed))
    print(f"{'wire':<20} {'streams':>8} {'no whole':>9} {'re-chunkings':>13} {'differed':>9}")
    failed = False
    for wire, tally in counts.items():
        print(
            f"{wire:<20} {tally['streams']:>8} {tally['no whole reply']:>9} "
            f"{tally['checked']:>13} {tally['differed']:>9}"
            + ("" if tally["checked"] else "   (no reframer: not measured)")
        )
        failed |= bool(tally["differed"])
        failed |= 0 < tally["checked"] < args.per_wire
    measured = [tally for tally in counts.values() if tally["checked"]]
    failed |= not measured
    for line in shown:
        print(line)
    print(
        f"{time.perf_counter() - started:.0f} s; seed {args.seed}; target {args.per_wire} re-chunkings a wire"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
