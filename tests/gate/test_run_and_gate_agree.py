"""`xpeval run` and `xpeval gate` give the same verdict on the same file: a row is scored from the
calls it keeps (an argument cut to the row bound is the cut text), by the runner when it writes
it and by the gate's chain of custody when it scores it again, so a row with the right tool and
one argument cut to the 4 KB row bound is not refused by the gate the run passed."""

from __future__ import annotations

import json
from pathlib import Path

from tests._cli import xpeval
from tests._shop import shop_project
from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.evals.emulator import EmulatorServer, Reply
from xpeval.evals.results.rows import MAX_VALUE_BYTES

LONG_ORDER = "A1234" + "9" * (MAX_VALUE_BYTES + 1000)
"""A wrong order number longer than the row bound: the row keeps its first 4 KB."""


def test_a_row_with_the_right_tool_and_a_cut_argument_gets_the_runs_verdict_from_the_gate(
    tmp_path: Path,
) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    answer = TurnResult(tool_calls=[ToolCall(id="c1", name="lookup_order", arguments={"order": LONG_ORDER})])
    with EmulatorServer() as server:
        server.script([Reply(result=answer)] * 2, name="default")
        run = xpeval(
            "run", "--mode", "live", "--target", "provider", "--cases", "orders_simple_01",
            "--retries", "0", "--no-baseline", "--no-progress",
            cwd=root, env={"OPENAI_API_KEY": "loopback-key", "OPENAI_BASE_URL": f"{server.url}/v1"},
        )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr

    gate = xpeval("gate", "--no-baseline", cwd=root)

    assert gate.returncode == run.returncode, gate.stdout + gate.stderr
    assert "gate: passed" in gate.stdout and "not evidence" not in gate.stderr
    rows = [json.loads(line) for line in (root / "reports" / "results.jsonl").read_text().splitlines()]
    (row,) = [r for r in rows if r.get("type") == "result"]
    assert [t["field"] for t in row["truncated"]] == ["calls[0].arguments.order"]
    assert (row["tool_selection_correct"], row["arguments_correct"], row["correct"]) == (True, False, False)
