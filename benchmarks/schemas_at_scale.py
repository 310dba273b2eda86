"""`xpeval schemas --tools DIR --no-fidelity` on 10,000 tools, against the same command on 100.

A folder of tool files holding `--tools` tools (default 10,000; 500 to a file, each file a JSON
list, under the reader's per-file size cap) is built by varying the real schemas of
`../shared/corpus/schemas` (each copy renamed `<name>_<n>`, its description and its root
schema's description numbered, so no two schemas are equal; a synthetic set of flat and nested
objects when the corpus is absent). Measured in the same run, each in a
fresh process with its workers:

- baseline: the same command on the first 100 of those tools, its time scaled up linearly
            (what a catalog of N tools costs when nothing in the run grows faster than N);
- at scale: the command on every tool.

Figures: wall time; CPU seconds (user and system, the command and its workers: under load the
one figure that does not depend on what else runs); peak memory of the whole process tree (the
command and its worker processes, sampled every 20 ms from /proc), as summed RSS (a page the
workers share with the command, forked from it, counted once per process; the target is read
on this) and as summed Pss (each shared page divided among its sharers: what the tree takes);
the number of stderr lines.

Targets: at scale under 30 s and under 500 MB (the machine these were measured on has 2 cores).
Run: `python benchmarks/schemas_at_scale.py [--tools N] [--baseline N]`; exit 1 when a target is
missed.

Measured 2026-12-04 on 2 cores shared with four other sessions (load average 7 to 12 during the
runs), 13 registered adapters, both versions by this script:

- before (main at 82d45c8): 10,000 tools 710.1 s wall at load 11.6, 154.6 s CPU, 616 MB peak
  RSS (310 MB Pss), 22 stderr lines (the 100-tool baseline: 19.4 s, 3.8 s CPU, 324 MB).
- after (branch scale): 10,000 tools 228.6 s wall at load 7.6 rising to 11, 50.3 s CPU (3.1x
  less), 421 MB peak RSS (255 MB Pss), 22 stderr lines (the 100-tool baseline: 6.5 s, 2.0 s
  CPU, 240 MB).
  The memory target is met; the time target could not be shown under that load.
- after, on the quiet machine (2026-12-04 02:37, load 1.0): 10,000 tools 24.9 s wall, 37.3 s
  CPU, 417 MB peak RSS (303 MB Pss), 22 stderr lines (the 100-tool baseline: 1.7 s, 240 MB):
  both targets met.
- what changed: meta-validation (the costliest check) memoizes each 2020-12 keyword value and
  subschema (`evals/acceptance/checker/meta.py`: 0.22 ms CPU per document on this set, 3.0 ms
  with plain `jsonschema`); adapters that share a wire and a dialect share one measurement per tool; the
  workers fork before the command imports pandas and after it dropped the tools it read (about
  80 MB less each), get tools in batches and send no definition back unless `--json` prints it.
  Every verdict is unchanged: `--json` on these 10,000 tools (130,000 lines), on
  `../shared/corpus/schemas` and on the built-in corpus is the same line for line but for
  `seconds`.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus" / "schemas"
TIME_TARGET = 30.0
RSS_TARGET_MB = 500.0


def _corpus_tools() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(CORPUS.rglob("*.json")) if CORPUS.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str) and "parameters" in data:
            found.append(data)
    return found


def _synthetic_tools() -> list[dict[str, Any]]:
    flat = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "mode": {"type": "string", "enum": ["fast", "full"]},
        },
        "required": ["query"],
    }
    nested = {
        "type": "object",
        "properties": {
            "filter": {"type": "object", "properties": {"tags": {"type": "array", "items": flat}}}
        },
    }
    return [
        {"name": "search", "description": "Search", "parameters": flat},
        {"name": "filter", "description": "Filter", "parameters": nested},
    ]


def build_tools(count: int) -> tuple[list[dict[str, Any]], str]:
    """`count` tools in xpeval's own form, and where they came from."""
    seeds = _corpus_tools()
    origin = f"{len(seeds)} corpus schemas" if seeds else "synthetic (no ../shared/corpus/schemas)"
    seeds = seeds or _synthetic_tools()
    tools = []
    for index in range(count):
        seed = copy.deepcopy(seeds[index % len(seeds)])
        seed["name"] = f"{seed['name'][:50]}_{index}"
        seed["description"] = f"{seed.get('description') or ''} (variant {index})".strip()
        if isinstance(seed["parameters"], dict) and seed["parameters"].get("type") == "object":
            # every schema its own: no run may judge one copy and reuse the verdict for the others
            seed["parameters"]["description"] = f"arguments of variant {index}"
        tools.append(seed)
    return tools, origin


def write_tools(tools: list[dict[str, Any]], folder: Path, per_file: int = 500) -> Path:
    folder.mkdir()
    for start in range(0, len(tools), per_file):
        chunk = tools[start : start + per_file]
        (folder / f"tools_{start // per_file:03d}.json").write_text(json.dumps(chunk), encoding="utf-8")
    return folder


def _tree_kb(root: int) -> tuple[int, int]:
    """The summed VmRSS and the summed Pss of `root` and its descendants (Linux /proc). RSS
    counts a page every process maps (what the workers share with the command, forked from it)
    once per process; Pss divides a shared page among its sharers: their sum is the memory the
    tree takes."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid = int(entry)
        children.setdefault(int(fields.get("PPid", "0").strip() or 0), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) if "VmRSS" in fields else 0
    total, proportional, stack = 0, 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        proportional += _pss_kb(pid)
        stack.extend(children.get(pid, []))
    return total, proportional


def _pss_kb(pid: int) -> int:
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)


def measure(tools: Path, reports: Path) -> dict[str, float]:
    """Wall seconds, CPU seconds (user and system, the command and its workers), peak tree RSS
    and Pss (MB) and stderr lines of one `xpeval schemas` run."""
    argv = [sys.executable, "-m", "xpeval", "schemas", "--tools", str(tools), "--no-fidelity"]
    argv += ["--reports", str(reports)]
    err = reports / "stderr.txt"
    reports.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    cpu_before = _children_cpu()
    with err.open("w") as err_file:
        process = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err_file)
        peak = [0, 0]

        def sample() -> None:
            while process.poll() is None:
                rss, pss = _tree_kb(process.pid)
                peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = process.wait()
        seconds = time.perf_counter() - started
        sampler.join()
    cpu = _children_cpu() - cpu_before
    lines = err.read_text(encoding="utf-8", errors="replace").splitlines()
    if code not in (0, 1):
        raise SystemExit(f"xpeval schemas exited {code}:\n" + "\n".join(lines[-30:]))
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_mb": peak[0] / 1024,
        "peak_pss_mb": peak[1] / 1024,
        "stderr_lines": float(len(lines)),
    }


def _children_cpu() -> float:
    """User and system seconds of the finished children (the command, and its workers, which it
    waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--baseline", type=int, default=100)
    args = parser.parse_args()
    tools, origin = build_tools(args.tools)
    with tempfile.TemporaryDirectory() as folder:
        small = write_tools(tools[: args.baseline], Path(folder) / "small")
        big = write_tools(tools, Path(folder) / "big")
        size = sum(path.stat().st_size for path in big.iterdir())
        print(f"{len(tools)} tools from {origin} ({size / 1e6:.1f} MB)")
        load = os.getloadavg()
        base = measure(small, Path(folder) / "small-reports")
        scale = measure(big, Path(folder) / "big-reports")
    linear = base["seconds"] * len(tools) / args.baseline
    print(f"load average at the start: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) on {os.cpu_count()} CPUs")
    print(
        f"baseline, {args.baseline} tools: {base['seconds']:.1f} s ({base['cpu_seconds']:.1f} s CPU), "
        f"{base['peak_mb']:.0f} MB peak RSS ({base['peak_pss_mb']:.0f} MB Pss), "
        f"{base['stderr_lines']:.0f} stderr lines; scaled to {len(tools)}: {linear:.1f} s"
    )
    print(
        f"at scale, {len(tools)} tools: {scale['seconds']:.1f} s ({scale['seconds'] / linear:.2f}x linear; "
        f"{scale['cpu_seconds']:.1f} s CPU), {scale['peak_mb']:.0f} MB peak RSS "
        f"({scale['peak_pss_mb']:.0f} MB Pss), {scale['stderr_lines']:.0f} stderr lines"
    )
    print(f"targets: under {TIME_TARGET:.0f} s and under {RSS_TARGET_MB:.0f} MB")
    ok = scale["seconds"] < TIME_TARGET and scale["peak_mb"] < RSS_TARGET_MB
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
