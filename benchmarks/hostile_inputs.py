"""What hostile case files and cassettes cost to refuse, and what the largest accepted ones cost.

Each input is read in its own process (`load_case_file` or `load_cassette`, the CLI's readers,
under the default `InputLimits`), so its peak RSS is its own. Measured in the same run:

- the baseline: the same reader on a benign input (a built-in case file; a committed cassette);
- refused: an alias bomb in a case file and in a cassette (under 1 KB, 387 million strings),
  a cassette whose body is gzip of 4 GiB of zeros (4 MB; and one gzip member of 256 MiB), a
  YAML file of a million tiny nodes (4 MB), a 200 MB file;
- accepted at the caps: a cassette of just under 32 MB (one body), a cassette whose gzip body
  decodes to 31 MB, a case file of just under 100,000 YAML nodes (a built-in one, padded);
- real traffic (`import_requests`, what `xpeval cases requests` runs; its baseline a file of 20
  requests): a 30 MB request line (refused by the line cap, a quarter of `max_input_mb`), a 6 MB
  line of three million JSON values (refused by the value cap before it is parsed), and 40 MB of
  ordinary request lines (accepted, read a line at a time);
- MCP servers (`read_mcp_tools`, what `xpeval schemas --mcp` runs, against a stdio server built
  with the official SDK; its baseline a server of three small pages): a server that pages
  forever with 3 MB pages (refused at the cap on bytes listed, an eighth of `max_input_mb`) and
  one with a tool a page (refused at the page cap, long before its 1,000th page), and one whose
  one page is a 300 MB line (refused at the cap on one message, as it arrives);
- handled: one episode of a 100,000-frame Bedrock cassette (a ConverseStream of text deltas, 24 MB,
  under the cap), read and decoded through the Bedrock adapter as a replay does, against the same
  episode of 10,000 frames;
- handled: an answer of 300,000 calls, played by the real runner into a results file and read
  back (`calls_in_a_row`; its baseline: an answer of one call). The row keeps the first calls
  within the row bound and counts the rest.

Targets (the issue's): each refusal at most 200 MB peak RSS and at most its baseline's plus
64 MB, and refused in at most 2 s (the read itself, after imports; for an MCP server, from its
answer to `initialize` to its last page read, after which the refusal is immediate: before, the
server's interpreter starts; after, the SDK stops the server, printed apart as `stop`, up to 2 s
by the SDK's policy; the fastest of three reads each). The 40 MB of request lines
is held to the same memory targets: a file of any size costs one line's memory. The
100,000-frame episode: decoded whole within 2 s and 200 MB peak, and at most 15 times its
10,000-frame baseline (linear is about 10; the quadratic reader it replaced was over a hundred).
Its seconds are the process's CPU time (every thread's): on a machine shared with other jobs wall
time measures the neighbours; the wall time is printed beside it.
Run: `python benchmarks/hostile_inputs.py`; exit 1 when a target is missed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

REPO = Path(__file__).resolve().parents[1]
PEAK_TARGET_MB = 200.0
ABOVE_BASELINE_MB = 64.0
REFUSE_TARGET_S = 2.0
EPISODE_TARGET_S = 2.0
EPISODE_RATIO_TARGET = 15.0
EPISODE_FRAMES = 100_000


class Reading(TypedDict):
    seconds: float
    cpu_seconds: float
    outcome: str
    peak_mb: float


def _bedrock_episode(path: Path) -> str:
    """One episode of a recorded ConverseStream: the cassette read, its response decoded
    through the Bedrock adapter (boto3 over xpeval's transport), as a replay plays it."""
    import asyncio

    from xpeval.evals.cassettes.decode import decode_interaction
    from xpeval.evals.cassettes.format import load_cassette

    (interaction,) = load_cassette(path)
    result = asyncio.run(decode_interaction(interaction, "bedrock-converse"))
    if result.error is not None:
        return f"error: {result.error.kind}: {result.error.message[:80]}"
    return f"decoded: {len(result.text or ''):,} characters of text, finish {result.finish_reason}"


def child(kind: str, path: Path) -> Reading:
    """Read one input in this process: seconds, outcome, this process image's peak RSS."""
    from xpeval.errors import UserError

    read = _reader(kind)
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        outcome = read(path)
    except UserError as exc:
        outcome = f"refused: {str(exc).split(': ', 1)[-1][:90]}"
    ended = time.perf_counter()
    if len(SERVER_READY) > 1:  # from the server's first answer to its last page; the refusal follows
        outcome += f" (stop {ended - SERVER_READY[-1]:.1f} s)"
        seconds = SERVER_READY[-1] - SERVER_READY[0]
    else:  # refused inside its first page, or no MCP read: to the end, the server's stop included
        seconds = ended - (SERVER_READY[0] if SERVER_READY else started)
    cpu_seconds = time.process_time() - cpu_started
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "outcome": outcome,
        "peak_mb": int(hwm.split()[1]) / 1024,
    }


def _reader(kind: str) -> Callable[[Path], str]:
    """The reader of one kind of input: `accepted`, or `refused: why` (or UserError)."""
    if kind == "case":
        from xpeval.evals.cases.loader import load_case_file

        return lambda path: f"accepted: {len(load_case_file(path))} cases"
    if kind == "bedrock-episode":
        import boto3  # noqa: F401  (imports are not the read: the adapter imports them at once)

        import xpeval.adapters.registry  # noqa: F401

        return _bedrock_episode
    if kind == "cassette":
        from xpeval.evals.cassettes.format import load_cassette

        return lambda path: f"accepted: {len(load_cassette(path))} interactions"
    if kind == "requests":
        from xpeval.evals.cases.requests import import_requests

        def requests(path: Path) -> str:
            done = import_requests(path, path.parent / f"{path.stem}-cases")
            return (
                f"refused: {done.refused[0].reason[:90]}" if done.refused else f"accepted: {done.cases} cases"
            )

        return requests
    sys.path.insert(0, str(REPO))
    from tests.schemas._servers import command
    from xpeval.evals.acceptance.sources.mcp_server import read_mcp_tools
    from xpeval.evals.acceptance.sources.tool_files import ToolsInputError

    def mcp(path: Path) -> str:
        try:
            return f"accepted: {len(read_mcp_tools([command(path, *MCP_ARGS.get(path.stem, ()))]))} tools"
        except ToolsInputError as exc:
            return f"refused: {str(exc).split(': ', 1)[-1][:90]}"

    _time_from_initialized()
    return mcp


SERVER_READY: list[float] = []
"""When the MCP server answered `initialize`, then each page (an MCP read is timed from the first
to the last: before, the server's interpreter starts, 2 to 7 s on a busy machine; after, the SDK
stops the server, waiting up to 2 s for it to exit, shown apart as `stop`)."""


def _time_from_initialized() -> None:
    from mcp import ClientSession

    initialize, list_tools = ClientSession.initialize, ClientSession.list_tools

    async def timed_initialize(self: ClientSession) -> Any:
        answer = await initialize(self)
        SERVER_READY.append(time.perf_counter())
        return answer

    async def timed_list_tools(self: ClientSession, *args: Any, **kwargs: Any) -> Any:
        answer = await list_tools(self, *args, **kwargs)
        SERVER_READY.append(time.perf_counter())
        return answer

    ClientSession.initialize = timed_initialize  # type: ignore[method-assign]
    ClientSession.list_tools = timed_list_tools  # type: ignore[method-assign]


MCP_ARGS = {"endless_fat": ("100", "30000"), "endless_thin": ("1", "10"), "giant": (str(300 << 20),)}
"""The servers' arguments (tools a page, bytes of each description), by script name."""


def measure(kind: str, path: Path) -> Reading:
    """One child's reading; an MCP read three times, keeping the fastest time and the highest
    peak (a busy machine slows a server's answers by hundreds of milliseconds from one read to the
    next)."""
    readings = [_measure_once(kind, path) for _ in range(3 if kind == "mcp" else 1)]
    fastest = min(readings, key=lambda reading: reading["seconds"])
    return {**fastest, "peak_mb": max(reading["peak_mb"] for reading in readings)}


def _measure_once(kind: str, path: Path) -> Reading:
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
    from tests.adapters._bundled_faults import bedrock_stream_cassette
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
        (
            f"baseline: a {EPISODE_FRAMES // 10:,}-frame Bedrock cassette",
            "bedrock-episode",
            "handled",
            write("bedrock-small.yaml", bedrock_stream_cassette(EPISODE_FRAMES // 10)),
        ),
        (
            f"{EPISODE_FRAMES:,}-frame Bedrock cassette",
            "bedrock-episode",
            "handled",
            write("bedrock-frames.yaml", bedrock_stream_cassette(EPISODE_FRAMES)),
        ),
        *_requests_and_servers(folder),
    ]


def _requests_and_servers(folder: Path) -> list[tuple[str, str, str, Path]]:
    from tests.schemas._servers import ENDLESS_SERVER, GIANT_SERVER, PAGED_SERVER
    from xpeval.evals.untrusted import MB

    request = {
        "messages": [{"role": "user", "content": "Weather in Rome?"}],
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
        ],
    }

    def lines(name: str, *bodies: str) -> Path:
        path = folder / name
        with path.open("w", encoding="utf-8") as handle:
            for body in bodies:
                handle.write(body + "\n")
        return path

    plain = json.dumps(request)
    long_line = json.dumps({**request, "messages": [{"role": "user", "content": "x" * (30 * MB)}]})
    dense = json.dumps(
        {**request, "messages": [{"role": "user", "content": "hi", "x": [0] * 3_000_000}]},
        separators=(",", ":"),
    )
    padded = json.dumps({**request, "messages": [{"role": "user", "content": "y" * 20_000}]})
    server = folder / "servers"
    server.mkdir()
    return [
        ("baseline: 20 request lines", "requests", "accepted", lines("requests.jsonl", *[plain] * 20)),
        ("a 30 MB request line", "requests", "refused", lines("long_line.jsonl", plain, long_line)),
        ("a request line of 3 million values (6 MB)", "requests", "refused", lines("dense.jsonl", dense)),
        ("40 MB of request lines", "requests", "accepted", lines("many.jsonl", *[padded] * 2_000)),
        ("baseline: an MCP server of 3 pages", "mcp", "accepted", _script(server / "paged.py", PAGED_SERVER)),
        (
            "MCP server paging forever (3 MB pages)",
            "mcp",
            "refused",
            _script(server / "endless_fat.py", ENDLESS_SERVER),
        ),
        (
            "MCP server paging forever (a tool a page)",
            "mcp",
            "refused",
            _script(server / "endless_thin.py", ENDLESS_SERVER),
        ),
        (
            "MCP server answering one 300 MB page",
            "mcp",
            "refused",
            _script(server / "giant.py", GIANT_SERVER),
        ),
    ]


def _script(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


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


def _handled(result: Reading, baseline_cpu: float) -> tuple[bool, str]:
    """Whether an episode was decoded whole within its targets, and its ratio to its baseline."""
    ratio = result["cpu_seconds"] / max(baseline_cpu, 1e-9)
    met = (
        result["outcome"].startswith("decoded")
        and result["cpu_seconds"] <= EPISODE_TARGET_S
        and result["peak_mb"] <= PEAK_TARGET_MB
        and ratio <= EPISODE_RATIO_TARGET
    )
    return met, f"{ratio:.1f}x its baseline"


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]))))
        return 0
    if sys.argv[1:2] == ["--row-child"]:
        print(json.dumps(row_child(int(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    ok = True
    baselines: dict[str, Reading] = {}
    with tempfile.TemporaryDirectory() as temporary:
        for label, kind, expected, path in inputs(Path(temporary)):
            result = measure(kind, path)
            outcome, seconds, peak = result["outcome"], result["seconds"], result["peak_mb"]
            size = path.stat().st_size
            line = f"{label:44} {size / 1024:>9,.0f} KB  {seconds:6.2f} s  {peak:6.0f} MB  {outcome}"
            if kind == "bedrock-episode":
                line += f"  (CPU {result['cpu_seconds']:.2f} s)"
            if label.startswith("baseline"):
                baselines[kind] = result
            elif expected == "handled":
                met, said = _handled(result, baselines[kind]["cpu_seconds"])
                line += f"  ({said}){'' if met else '  TARGET MISSED'}"
                ok = ok and met
            elif expected == "refused" or kind == "requests":
                above = peak - baselines[kind]["peak_mb"]
                met = (
                    outcome.startswith(expected)
                    and peak <= PEAK_TARGET_MB
                    and above <= ABOVE_BASELINE_MB
                    and (seconds <= REFUSE_TARGET_S or expected == "accepted")
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
        f"{ABOVE_BASELINE_MB:.0f} MB over the same reader's baseline; the {EPISODE_FRAMES:,}-frame "
        f"episode decoded within {EPISODE_TARGET_S:g} CPU s, {PEAK_TARGET_MB:.0f} MB and "
        f"{EPISODE_RATIO_TARGET:g}x its baseline: {'met' if ok else 'MISSED'}"
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
    started, cpu_started = time.perf_counter(), time.process_time()
    path = run_vendors(folder / f"calls-{calls}.jsonl", [case], {"openai-chat": lambda _: answer})
    load_run(path).check_complete()
    (row,) = [r for r in records(path) if isinstance(r, ResultRow)]
    seconds = time.perf_counter() - started
    line = max(len(line) for line in path.read_bytes().splitlines())
    outcome = f"handled: {len(row.calls)} calls kept, {row.dropped_calls:,} counted, row {line / 1024:.0f} KB"
    with open("/proc/self/status") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu_started,
        "outcome": outcome,
        "peak_mb": int(hwm.split()[1]) / 1024,
    }


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
