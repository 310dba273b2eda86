"""What hostile case files and cassettes cost to refuse, and what the largest accepted ones cost.

Each input is read in its own process (`load_case_file` or `load_cassette`, the CLI's readers,
under the default `InputLimits`), so its peak RSS is its own. Measured in the same run:

- the baseline: the same reader on a benign input (a built-in case file; a committed cassette);
- refused: an alias bomb in a case file and in a cassette (under 1 KB, 387 million strings),
  a cassette whose body is gzip of 4 GiB of zeros (4 MB; and one gzip member of 256 MiB), a
  YAML file of a million tiny nodes (4 MB), a 200 MB file;
- accepted at the caps: a cassette of just under 32 MB (one body), a cassette whose gzip body
  decodes to 31 MB, a case file of just under 100,000 YAML nodes (a built-in one, padded);
- handled: an answer of 300,000 calls, played by the real runner into a results file and read
  back (`calls_in_a_row`; its baseline: an answer of one call). The row keeps the first calls
  within the row bound and counts the rest.

Targets (the issue's): each refusal at most 200 MB peak RSS and at most its baseline's plus
64 MB, and refused in at most 2 s (the read itself, after imports).
Run: `python benchmarks/hostile_inputs.py`; exit 1 when a target is missed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

REPO = Path(__file__).resolve().parents[1]
PEAK_TARGET_MB = 200.0
ABOVE_BASELINE_MB = 64.0
REFUSE_TARGET_S = 2.0


class Reading(TypedDict):
    seconds: float
    outcome: str
    peak_mb: float


def child(kind: str, path: Path) -> Reading:
    """Read one input in this process: seconds, outcome, this process image's peak RSS."""
    from xpeval.evals.errors import UserError

    if kind == "case":
        from xpeval.evals.cases.loader import load_case_file as read
    else:
        from xpeval.evals.cassettes.format import load_cassette as read  # type: ignore[assignment]
    started = time.perf_counter()
    try:
        read(path)
        outcome = "accepted"
    except UserError as exc:
        outcome = f"refused: {str(exc).split(': ', 1)[-1][:90]}"
    seconds = time.perf_counter() - started
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    return {"seconds": seconds, "outcome": outcome, "peak_mb": int(hwm.split()[1]) / 1024}


def measure(kind: str, path: Path) -> Reading:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"child read failed:\n{done.stderr[-3000:]}")
    result: Reading = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def inputs(folder: Path) -> list[tuple[str, str, str, Path]]:
    """(label, reader, expected outcome, path) of every input, written into `folder`."""
    sys.path.insert(0, str(REPO))
    from tests import _hostile as hostile
    from xpeval.evals.untrusted import DEFAULT_MAX_INPUT_MB, DEFAULT_MAX_YAML_NODES, MB

    def write(name: str, text: str) -> Path:
        path = folder / name
        path.write_text(text, encoding="utf-8")
        return path

    cap = DEFAULT_MAX_INPUT_MB * MB
    committed = sorted((REPO / "cassettes" / "openai-chat").rglob("calc_simple_01.yaml"))[0]
    big_body = hostile.CHAT_ANSWER.replace('"hi"', '"' + "x" * (cap - 4096) + '"')
    gzip_body = hostile.gzip_of_zeros(DEFAULT_MAX_INPUT_MB - 1)
    builtin = (REPO / "evals/cases/builtin/calc.yaml").read_text(encoding="utf-8")
    nodes = (DEFAULT_MAX_YAML_NODES - 1_100) // 2  # `- [a]`: a sequence and its scalar per line
    return [
        ("baseline: a built-in case file", "case", "accepted", REPO / "evals/cases/builtin/calc.yaml"),
        ("baseline: a committed cassette", "cassette", "accepted", committed),
        (
            "alias bomb, case file",
            "case",
            "refused",
            write("bomb.yaml", hostile.case_file_bomb_in_arguments()),
        ),
        ("alias bomb, cassette", "cassette", "refused", write("alias.yaml", hostile.cassette_alias_bomb())),
        (
            "gzip of 4 GiB of zeros, cassette",
            "cassette",
            "refused",
            write("gzip4g.yaml", hostile.cassette_with_gzip_body(hostile.gzip_of_4_gib_of_zeros())),
        ),
        (
            "one gzip member of 256 MiB, cassette",
            "cassette",
            "refused",
            write("gzip256.yaml", hostile.cassette_with_gzip_body(hostile.gzip_of_zeros(256))),
        ),
        ("a million tiny YAML nodes", "cassette", "refused", write("dense.yaml", "- a\n" * 1_000_000)),
        ("a 200 MB file", "cassette", "refused", hostile.sparse_file(folder / "huge.yaml", 200 * MB)),
        (
            f"largest cassette accepted (~{DEFAULT_MAX_INPUT_MB} MB body)",
            "cassette",
            "accepted",
            write("largest.yaml", _plain_cassette(big_body)),
        ),
        (
            f"gzip body decoding to {DEFAULT_MAX_INPUT_MB - 1} MiB",
            "cassette",
            "accepted",
            write("gzip-ok.yaml", hostile.cassette_with_gzip_body(gzip_body)),
        ),
        (
            f"largest case file accepted (~{DEFAULT_MAX_YAML_NODES:,} nodes)",
            "case",
            "accepted",
            write("largest_case.yaml", builtin + "x-padding:\n" + "  - [a]\n" * nodes),
        ),
    ]


def _plain_cassette(body: str) -> str:
    import yaml

    sys.path.insert(0, str(REPO))
    from tests._hostile import CHAT_REQUEST

    interaction = {
        "request": {
            "body": CHAT_REQUEST,
            "headers": {},
            "method": "POST",
            "uri": "https://api.openai.com/v1/x",
        },
        "response": {"body": {"string": body}, "headers": {}, "status": {"code": 200, "message": "OK"}},
    }
    return yaml.safe_dump({"interactions": [interaction], "version": 1}, width=1 << 30)


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]))))
        return 0
    if sys.argv[1:2] == ["--row-child"]:
        print(json.dumps(row_child(int(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    ok = True
    baselines: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as temporary:
        for label, kind, expected, path in inputs(Path(temporary)):
            result = measure(kind, path)
            outcome, seconds, peak = result["outcome"], result["seconds"], result["peak_mb"]
            size = path.stat().st_size
            line = f"{label:44} {size / 1024:>9,.0f} KB  {seconds:6.2f} s  {peak:6.0f} MB  {outcome}"
            if label.startswith("baseline"):
                baselines[kind] = peak
            elif expected == "refused":
                above = peak - baselines[kind]
                met = (
                    outcome.startswith("refused")
                    and peak <= PEAK_TARGET_MB
                    and above <= ABOVE_BASELINE_MB
                    and seconds <= REFUSE_TARGET_S
                )
                line += f"  ({above:+.0f} MB over its baseline){'' if met else '  TARGET MISSED'}"
                ok = ok and met
            elif not outcome.startswith("accepted"):
                line += "  EXPECTED ACCEPTED"
                ok = False
            print(line, flush=True)
    ok = calls_in_a_row() and ok
    print(
        f"targets: refused within {REFUSE_TARGET_S:g} s, at most {PEAK_TARGET_MB:.0f} MB peak and "
        f"{ABOVE_BASELINE_MB:.0f} MB over the same reader's baseline: {'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


ROW_CALLS = 300_000
"""An answer of 300,000 calls (a plugin wire's, issue 32: a 53.6 MB row before rows were bounded
in calls)."""


def row_child(calls: int, folder: Path) -> Reading:
    """In this process: one episode answered with `calls` calls, played by the real runner into a
    results file (`tests.vendors._vendors.run_vendors`), then read back by every reader of
    results (the tidy frame, its completeness, the gate's records). Seconds from the answer to
    the last read; this process image's peak RSS."""
    sys.path.insert(0, str(REPO))
    from tests.vendors._vendors import run_vendors
    from xpeval.adapters.contract import ToolCall, TurnResult
    from xpeval.evals.cases import load_cases
    from xpeval.evals.results.evidence import records
    from xpeval.evals.results.load import load_run
    from xpeval.evals.results.rows import ResultRow

    case = next(c.case for c in load_cases() if c.case.id == "calc_simple_01")
    call = ToolCall(id="c", name="convert_units", arguments={"value": 1, "from_unit": "mi", "to_unit": "km"})
    answer = TurnResult(tool_calls=[call] * calls)
    started = time.perf_counter()
    path = run_vendors(folder / f"calls-{calls}.jsonl", [case], {"openai-chat": lambda _: answer})
    load_run(path).check_complete()
    (row,) = [r for r in records(path) if isinstance(r, ResultRow)]
    seconds = time.perf_counter() - started
    line = max(len(line) for line in path.read_bytes().splitlines())
    outcome = f"handled: {len(row.calls)} calls kept, {row.dropped_calls:,} counted, row {line / 1024:.0f} KB"
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    return {"seconds": seconds, "outcome": outcome, "peak_mb": int(hwm.split()[1]) / 1024}


def calls_in_a_row() -> bool:
    """300,000 calls in a row against one call (its baseline), each in its own process: handled
    (kept within the row bound, the file read back) within the refusal targets."""
    with tempfile.TemporaryDirectory() as temporary:
        readings = {}
        for calls in (1, ROW_CALLS):
            done = subprocess.run(
                [sys.executable, __file__, "--row-child", str(calls), temporary],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"child run failed:\n{done.stderr[-3000:]}")
            readings[calls] = json.loads(done.stdout.strip().splitlines()[-1])
    base, big = readings[1], readings[ROW_CALLS]
    above = big["peak_mb"] - base["peak_mb"]
    met = (
        big["outcome"].startswith("handled")
        and big["peak_mb"] <= PEAK_TARGET_MB
        and above <= ABOVE_BASELINE_MB
        and big["seconds"] <= REFUSE_TARGET_S
    )
    for label, reading in (("baseline: an answer of one call", base), (f"{ROW_CALLS:,} calls in a row", big)):
        figures = f"{reading['seconds']:6.2f} s  {reading['peak_mb']:6.0f} MB"
        print(f"{label:44} {'':>12}  {figures}  {reading['outcome']}", flush=True)
    print(f"  ({above:+.0f} MB over its baseline){'' if met else '  TARGET MISSED'}", flush=True)
    return met


if __name__ == "__main__":
    raise SystemExit(main())
