"""`run` and `gate` end with what the verdict compared: episodes and rows judged, the baseline
file, cases flipped each way, what was new; the scorecard opens with the same (issue 36, point 8)."""

from __future__ import annotations

from pathlib import Path

from tests._cli import Cli
from tests._shop import shop_project


def test_run_and_gate_end_with_what_they_compared(cli: Cli, tmp_path: Path) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat", "anthropic-messages"]\n')
    recorded = cli("run", "--mode", "record", "--target", "emulator", "--no-progress", cwd=root)
    assert recorded.returncode == 0
    assert "compared: 4 episode(s) in 2 row(s); not compared with a baseline" in recorded.stdout
    assert cli("gate", "--update-baseline", cwd=root).returncode == 0
    baseline = root / "evals" / "cases" / "baseline.json"
    expected = (
        f"compared: 4 episode(s) in 2 row(s); 2 row(s) compared with {baseline}: 0 case(s) worse, "
        "0 better; new, not compared: 0 row(s), 0 case(s)"
    )
    replayed = cli("run", "--no-progress", cwd=root)
    assert replayed.returncode == 0 and expected in replayed.stdout.splitlines(), replayed.stdout
    scorecard = (root / "reports" / "scorecard.md").read_text().splitlines()
    assert scorecard[2] == f"**Verdict: passed.** Compared: {expected.removeprefix('compared: ')}."
    gated = cli("gate", cwd=root)
    assert gated.returncode == 0 and expected in gated.stdout.splitlines(), gated.stdout
