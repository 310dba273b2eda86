"""The gate over a million result rows of distinct answers, against a pyarrow read of the same file.

A real run's rows (the committed cassettes replayed) are replicated into one results file of
`--rows` result lines, each copy another trial of every episode (as `--repeat` writes them),
with its plan and completion record. Every row answers something of its own
(`distinct_answer`: a nightly's answers do not repeat, so the custody's memo of repeated
answers cannot carry it), its verdict scored again as the gate's chain of custody scores it.
Measured in the same run, each in a fresh process:

- gate:      `xpeval gate --results FILE` (completeness check, chain of custody: every row
             scored again from its calls, per-case codes, the paired test against the
             committed baseline, the scorecard's counts);
- yardstick: pyarrow's JSON reader with an explicit schema, then the same per-row aggregation
             (counts per source, adapter and model) in pandas.

Targets: the gate within 2x the yardstick's wall time, and under 1 GB peak RSS.
Measured 2026-12-07 on 2 cores shared with five sessions and two llama-servers, 1,000,110 rows
(1,293 MB): at 02:42 UTC, load 11 falling to 7, gate 313.9 s, yardstick 28.5 s, 11.02x, gate
peak 1,321 MB (the yardstick's 4,634 MB); at 02:59 UTC, load 3 to 4.5, gate 253.9 s, yardstick
13.7 s, 18.56x, gate peak 1,280 MB: both targets missed (docs/benchmarks.md).
Run: `python benchmarks/results_at_scale.py [--rows N] [--keep FILE | --reuse FILE]`; exit 1
when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from xpeval.evals.results.evidence import project_case_set
from xpeval.evals.results.rows import ResultRow
from xpeval.evals.verdict.argument_validity import ToolValidators, call_validities, case_validators
from xpeval.evals.verdict.custody import VERDICT_FIELDS, rescore

REPO = Path(__file__).resolve().parent.parent
TIME_TARGET = 2.0
RSS_TARGET_MB = 1024.0

_MEASURE = """
import json, sys, time
started = time.perf_counter()
{body}
# VmHWM is this process image's own peak: ru_maxrss would carry the forking parent's over exec.
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({{"seconds": time.perf_counter() - started, "peak_mb": int(hwm.split()[1]) / 1024}}))
"""

GATE = """
from xpeval.evals.cli import main
code = main(["gate", "--results", sys.argv[1], "--baseline", sys.argv[2]])
assert code in (0, 1), code
"""

YARDSTICK = """
import io
import pyarrow.json as pajson
from xpeval.evals.results.load import SCHEMA
data = open(sys.argv[1], "rb").read()
rows = data[data.find(b"\\n") + 1:]  # the header line is not a row
table = pajson.read_json(io.BytesIO(rows), parse_options=pajson.ParseOptions(
    explicit_schema=SCHEMA, unexpected_field_behavior="ignore"))
frame = table.to_pandas()
frame = frame[(frame["type"] == "result") & frame["final"].fillna(False)]
rates = ["correct", "tool_selection_correct", "malformed"]
counts = frame.groupby(["source", "adapter", "model"])[rates].sum()
assert len(counts)
"""


def replay_run(folder: Path) -> Path:
    results = folder / "results.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "xpeval",
            "run",
            "--no-progress",
            "--results",
            str(results),
            "--reports",
            str(folder / "reports"),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return results


def distinct_answer(row: dict[str, Any], number: int) -> dict[str, Any]:
    """`row` answering with a value no other row gives: in each call, the first argument (by
    name) carries `number` (a string gets it appended, a number has it added, a call without
    arguments gains one); a row without calls says `number` in its text. Its verdict fields are
    then set as the gate's chain of custody scores them, so the row stays evidence."""
    calls = []
    for call in row["calls"]:
        arguments = dict(call["arguments"])
        name = min(arguments, default="row")
        value = arguments.get(name)
        if isinstance(value, str):
            arguments[name] = f"{value} #{number}"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            arguments[name] = value + number
        else:
            arguments[name] = number
        calls.append({**call, "arguments": arguments})
    text = f"answer {number}" if not calls else row["text"]
    return {**row, "calls": calls, "text": text}


class _Scorer:
    """Rows scored as the gate's chain of custody scores them, each case's validators made once."""

    def __init__(self) -> None:
        self.cases = project_case_set(REPO).cases
        self._validators: dict[str, ToolValidators] = {}

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        """`row` with the verdict fields and each call's schema verdict its calls score on its case."""
        stored = ResultRow.model_validate(row)
        case = self.cases[stored.case_id]
        validators = self._validators.get(case.id) or self._validators.setdefault(
            case.id, case_validators(case)
        )
        verdict = rescore(stored, case, validators)
        calls = [
            {**call, "schema_valid": checked.valid, "schema_error": checked.reason}
            for call, checked in zip(row["calls"], call_validities(stored, validators), strict=True)
        ]
        return {**row, **{name: verdict[name] for name in (*VERDICT_FIELDS, "reason")}, "calls": calls}


_SCORER: _Scorer | None = None


def _copy(job: tuple[list[dict[str, Any]], int, int]) -> str:
    """Trial `trial` of every row, each row's answer its own (numbered from `first`), as lines."""
    global _SCORER
    results, trial, first = job
    _SCORER = _SCORER or _Scorer()
    return "".join(
        json.dumps(_SCORER(distinct_answer({**row, "trial": trial}, first + index)), separators=(",", ":"))
        + "\n"
        for index, row in enumerate(results)
    )


def replicate(source: Path, rows: int, target: Path) -> int:
    """`rows` result lines (rounded up to whole copies of the run): each copy is another trial of
    every episode, as `xpeval run --repeat N` writes them, and every row's answer is its own
    (`distinct_answer`: a nightly's answers do not repeat, so no memo of repeated answers can
    carry the gate), scored as the gate's chain of custody scores it from the run's own case
    set (two processes build it). The file says it was recorded (a nightly's shape): a replay
    of a million episodes would need a million cassettes on disk, and the custody's
    per-cassette provenance read is measured by the replay itself."""
    lines = source.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    results = [json.loads(line) for line in lines if '"type":"result"' in line]
    copies = -(-rows // len(results))
    header["plan"] = {**header["plan"], "repeat": copies}
    header["config"] = {**header["config"], "mode": "record"}
    jobs = ((results, trial, 1 + trial * len(results)) for trial in range(copies))
    with target.open("w", encoding="utf-8") as out, multiprocessing.Pool(2) as pool:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        for text in pool.imap(_copy, jobs):  # in trial order: whole copies, as a run plans them
            out.write(text)
        written = copies * len(results)
        out.write(
            json.dumps({"type": "complete", "run": header["run"], "finished_at": "now", "rows": written})
            + "\n"
        )
    return written


def measure(body: str, *args: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE.format(body=body), *args], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"measurement failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="build the results file here and keep it (to profile it)")
    parser.add_argument("--reuse", type=Path, help="measure a results file an earlier --keep built")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        big = args.reuse or args.keep or Path(folder) / "big.jsonl"
        if args.reuse is None:
            written = replicate(replay_run(Path(folder)), args.rows, big)
        else:
            written = sum(1 for line in big.open("rb") if b'"type":"result"' in line)
        print(
            f"{written} result rows ({big.stat().st_size / 1e6:.0f} MB) built in "
            f"{time.perf_counter() - started:.0f} s"
        )
        yardstick = measure(YARDSTICK, str(big))
        gate = measure(GATE, str(big), str(REPO / "reports" / "baseline.json"))
    ratio = gate["seconds"] / yardstick["seconds"]
    print(f"pyarrow yardstick: {yardstick['seconds']:.1f} s, {yardstick['peak_mb']:.0f} MB peak")
    print(f"xpeval gate:       {gate['seconds']:.1f} s, {gate['peak_mb']:.0f} MB peak")
    print(
        f"ratio {ratio:.2f}x (target <= {TIME_TARGET}x), peak {gate['peak_mb']:.0f} MB "
        f"(target < {RSS_TARGET_MB:.0f})"
    )
    ok = ratio <= TIME_TARGET and gate["peak_mb"] < RSS_TARGET_MB
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
