"""A row is bounded in calls as it is in bytes: an answer of thousands of calls keeps the first
ones that fit (`MAX_ROW_CALLS`, `MAX_ROW_BYTES`) and counts the rest (`dropped_calls`), so the
run's own results file stays readable, every other adapter's rows with it; and whatever the
writer writes, every reader of results files (the tidy frame, the whole file, the gate's
records) reads back."""

from __future__ import annotations

import json
from pathlib import Path

from tests._cli import Cli, xpeval
from tests.vendors._vendors import perfect, run_vendors
from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.emulator import EmulatorServer, Reply
from xpeval.evals.results.evidence import records
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.load import load_run
from xpeval.evals.results.rows import MAX_ROW_BYTES, MAX_ROW_CALLS, ResultRow

CALLS = 20_000
"""An answer of 20,000 calls (2.7 MB as a row before the bound: over the readers' 1 MB block)."""


def test_an_answer_of_20000_calls_keeps_the_results_file_and_every_adapters_rows(tmp_path: Path) -> None:
    many = TurnResult(
        tool_calls=[
            ToolCall(
                id=f"call_{i}",
                name="convert_units",
                arguments={"value": i, "from_unit": "mi", "to_unit": "km"},
            )
            for i in range(CALLS)
        ]
    )
    env_keys = {"OPENAI_API_KEY": "loopback-key", "ANTHROPIC_API_KEY": "loopback-key"}
    with EmulatorServer() as server:
        server.script([Reply(result=many)] * 2, name="default")
        run = xpeval(
            "run", "--mode", "live", "--target", "provider", "--adapters", "openai-chat,anthropic-messages",
            "--cases", "calc_simple_01", "--stream", "never", "--retries", "0", "--no-baseline",
            "--no-progress",
            "--results", str(tmp_path / "results.jsonl"), "--reports", str(tmp_path / "reports"),
            cwd=tmp_path,
            env={**env_keys, "OPENAI_BASE_URL": f"{server.url}/v1", "ANTHROPIC_BASE_URL": server.url},
        )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    lines = (tmp_path / "results.jsonl").read_bytes().splitlines()
    rows = [json.loads(line) for line in lines if b'"type":"result"' in line]
    assert {r["adapter"] for r in rows} == {"openai-chat", "anthropic-messages"}
    for row in rows:
        assert 0 < len(row["calls"]) <= MAX_ROW_CALLS
        assert len(row["calls"]) + row["dropped_calls"] == CALLS
        assert row["correct"] is False and "never correct" in row["reason"]
    assert max(len(line) for line in lines[1:]) <= MAX_ROW_BYTES

    gate = xpeval("gate", "--results", str(tmp_path / "results.jsonl"), "--no-baseline", cwd=tmp_path)
    assert gate.returncode == 0, gate.stdout + gate.stderr


ESCAPED = "\x01" * 200_000
"""A value every byte of which JSON writes as six (`\\u0001`): the most a row's text can take."""


def worst(case: Case) -> TurnResult:
    """The largest answer the writer can be handed: many calls, each with the longest name, id
    and arguments, every text as long and as escaped as it can be."""
    calls = [
        ToolCall(
            id=ESCAPED,
            name=ESCAPED,
            arguments={f"{ESCAPED[:5000]}{k}": ESCAPED[:5000] for k in range(5)} if i % 2 else {"a": ESCAPED},
            parse_error=ESCAPED if i % 3 == 0 else None,
        )
        for i in range(MAX_ROW_CALLS * 2)
    ]
    return TurnResult(tool_calls=calls, text=ESCAPED, refusal=ESCAPED)


def test_the_writers_worst_row_reads_back_in_every_reader(tmp_path: Path, cli: Cli) -> None:
    cases = [c.case for c in load_cases() if c.case.id in ("calc_simple_01", "weather_irrelevance_01")]
    path = run_vendors(tmp_path / "worst.jsonl", cases, {"openai-chat": worst, "moonshot": perfect})

    lines = path.read_bytes().splitlines()
    assert max(len(line) for line in lines[1:]) <= MAX_ROW_BYTES
    run = load_run(path)
    run.check_complete()
    assert len(run.frame) == 4
    whole = ResultsFile.read(path)
    assert all(
        len(row.calls) <= MAX_ROW_CALLS and row.dropped_calls > 0
        for row in whole.rows
        if row.adapter == "openai-chat"
    )
    assert sum(isinstance(r, ResultRow) for r in records(path)) == 4

    gate = cli("gate", "--results", str(path), "--no-baseline", cwd=tmp_path)
    assert gate.returncode == 0, gate.stdout + gate.stderr
