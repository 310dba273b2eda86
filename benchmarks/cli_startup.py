"""What every `xpeval` command pays before it does anything: the CLI's startup.

Each variant runs as a fresh process (the console script, as a user runs it), interleaved round by
round with the baseline, `python -c pass` of the same interpreter (site-packages and the editable
install's finder included), so machine load hits all alike. CPU time (user + sys) of the child,
not wall time: on a shared machine wall time measures the neighbours.

Targets (the issue's goals on a quiet 2-core machine, where `python -c pass` takes ~20 ms): at most
15x the baseline for `--version` and `--help` (0.3 s) and 50x for `xpeval adapters` (1 s).

Run: `python benchmarks/cli_startup.py [--rounds N]`; exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _process import child_cpu

XPEVAL = str(Path(sys.executable).with_name("xpeval"))
VARIANTS = {
    "xpeval --version": ([XPEVAL, "--version"], 15.0),
    "xpeval --help": ([XPEVAL, "--help"], 15.0),
    "xpeval adapters": ([XPEVAL, "adapters"], 50.0),
}


def main(rounds: int) -> int:
    baseline: list[float] = []
    samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(rounds):
        baseline.append(child_cpu([sys.executable, "-c", "pass"]))
        for name, (argv, _) in VARIANTS.items():
            samples[name].append(child_cpu(argv))
    base = statistics.median(baseline)
    print(f"python -c pass: {base * 1e3:.0f} ms CPU (median of {rounds})")
    missed = False
    for name, (_, target) in VARIANTS.items():
        spent = statistics.median(samples[name])
        ratio = spent / base
        verdict = "ok" if ratio <= target else f"MISSED (target {target:g}x)"
        print(
            f"{name}: {spent * 1e3:.0f} ms CPU, {ratio:.1f}x python -c pass (target <= {target:g}x) {verdict}"
        )
        missed = missed or ratio > target
    return 1 if missed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="runs of each command")
    sys.exit(main(parser.parse_args().rounds))
