"""A replay's blank latency cells say why (issue 36, point 8: "p50/p95 are `-` in replay without
saying why"): in a team's own project replayed from its recordings, the scorecard's p50/p95 cells
are `-` and the scorecard says that a replayed episode's time says nothing about the model."""

from __future__ import annotations

from pathlib import Path

from tests._cli import Cli
from tests._shop import shop_project


def test_a_replays_blank_latency_cells_say_why(cli: Cli, tmp_path: Path) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    assert cli("run", "--mode", "record", "--target", "emulator", "--no-progress", cwd=root).returncode == 0
    assert cli("gate", "--update-baseline", cwd=root).returncode == 0
    assert cli("run", "--no-progress", cwd=root).returncode == 0

    scorecard = (root / "reports" / "scorecard.md").read_text(encoding="utf-8")
    row = next(
        line for line in scorecard.splitlines() if line.startswith("| EMULATED (pipeline only) | openai-chat")
    )
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[11:13] == ["-", "-"], row  # p50 s, p95 s
    said = " ".join(scorecard.split())
    assert (
        "`-` where every episode was replayed from a recording (a replay's time says nothing about the model)"
        in said
    )
