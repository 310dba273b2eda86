"""`xpeval cassettes check` replays each cassette the way `xpeval run` replays it (the run's
episode backend and `play_open`), so the two never disagree about a recording: an emulated
cassette rendered from a case that has changed since is that cassette's problem in both."""

from __future__ import annotations

from pathlib import Path

from tests._cli import Cli
from tests._shop import shop_project


def test_cassettes_check_tells_a_changed_case_as_run_does(cli: Cli, tmp_path: Path) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    recorded = cli("run", "--mode", "record", "--target", "emulator", "--no-progress", cwd=root)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert cli("cassettes", "check", cwd=root).returncode == 0, "unchanged: no drift"

    cases = root / "evals" / "cases" / "orders.yaml"  # the expected answer edited; the request is the same
    cases.write_text(
        cases.read_text().replace('arguments: {order: ["A1234"]}', 'arguments: {order: ["A9999"]}')
    )
    replayed = cli("run", "--no-progress", "--no-baseline", cwd=root)
    checked = cli("cassettes", "check", cwd=root)
    changed = "case orders_simple_01 changed since it was recorded"
    assert changed in replayed.stdout + replayed.stderr
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert changed in checked.stdout + checked.stderr
