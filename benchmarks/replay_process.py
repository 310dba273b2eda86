"""The default `xpeval run` as a user's CI pays for it, against the SDK floor of the same calls.

`xpeval run` (replay every committed cassette through every adapter, score, write the scorecard,
gate) runs as a child process; its CPU (user + sys, as `/usr/bin/time` reports it) is compared
with the floor's, measured in the same run, round by round (`_replay_floor.py`): a child process
with the same imports (the modules `xpeval run` had loaded when it ended, imported in the same
order) that issues the same SDK calls as the replay (the official openai, anthropic and
google-genai SDKs', and the bundled wires' mistralai, cohere and boto3 calls) with the same
request arguments (captured from `Adapter.send` in a run of its own, before the rounds), each
answered from memory by the bytes the cassette served it, a stream read to its end. The floor
holds the SDKs' request and response models and every import; it reads no cassette, builds no
case, decodes, scores and reports nothing. What the replay costs above it is xpeval's own.

Target: the whole process at most TARGET times the floor (median of the rounds' ratios).

Measured (2-core machine shared with other sessions; both sides share the load, so the ratio is
the figure to compare; 1,802 episodes, 2,929 SDK calls):
- see docs/benchmarks.md for the history against the earlier floor (the raw decode alone).

Run: `python benchmarks/replay_process.py [--rounds N]`; exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _process import child_cpu

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.3
XPEVAL = str(Path(sys.executable).with_name("xpeval"))
FLOOR = str(Path(__file__).resolve().with_name("_replay_floor.py"))


def run_argv(folder: Path) -> list[str]:
    """The default replay's arguments: results and reports in `folder`, no progress bar."""
    return ["run", "--no-progress", "--results", str(folder / "results.jsonl"), "--reports", str(folder)]


def episodes_in(results: Path) -> int:
    return sum(1 for line in results.open() if json.loads(line).get("final") is True)


def whole_process() -> tuple[float, int]:
    """CPU seconds of one `xpeval run` from the repository root, and the episodes it played."""
    with tempfile.TemporaryDirectory() as folder:
        spent = child_cpu([XPEVAL, *run_argv(Path(folder))], cwd=REPO)
        return spent, episodes_in(Path(folder) / "results.jsonl")


def capture(into: Path) -> int:
    """Capture the replay's SDK calls, their answers and its imports into `into`; its episodes."""
    with tempfile.TemporaryDirectory() as folder:
        child_cpu([sys.executable, FLOOR, "capture", str(into), *run_argv(Path(folder))], cwd=REPO)
        return episodes_in(Path(folder) / "results.jsonl")


def floor(captured: Path) -> float:
    """CPU seconds of the floor process over the captured calls."""
    return child_cpu([sys.executable, FLOOR, "play", str(captured)], cwd=REPO)


def main(rounds: int) -> int:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        captured = Path(folder) / "calls.pickle"
        episodes = capture(captured)
        samples: list[tuple[float, float]] = []
        for _ in range(rounds):
            process, played = whole_process()
            assert played == episodes, f"the replay played {played} episodes, the capture {episodes}"
            samples.append((process, floor(captured)))
    load_after = os.getloadavg()[0]
    ratio = statistics.median(process / sdk for process, sdk in samples)
    process = statistics.median(p for p, _ in samples)
    sdk = statistics.median(s for _, s in samples)
    verdict = "ok" if ratio <= TARGET else "MISSED"
    print(
        f"xpeval run, whole process: {episodes} episodes, {process:.1f} s CPU "
        f"({process / episodes * 1e3:.2f} ms/episode) | SDK floor {sdk:.1f} s "
        f"({sdk / episodes * 1e3:.2f} ms/episode) | rounds' ratios "
        + ", ".join(f"{p / s:.2f}" for p, s in samples)
        + f" | median {ratio:.2f}x (target <= {TARGET:g}x) {verdict}"
        + f" | load {load_before:.1f} -> {load_after:.1f}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both sides, interleaved")
    sys.exit(main(parser.parse_args().rounds))
