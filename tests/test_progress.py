"""Long commands are never silent: `xpeval run`, `xpeval cassettes check` and `xpeval schemas`
report their progress on stderr as they go (a bar on a terminal; elsewhere a line every tenth of
the way or ten seconds) and end with a summary."""

from __future__ import annotations

import re
from pathlib import Path

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from tests._shop import shop_project
from xpeval.evals.running.progress import PlainPace


def _progress_lines(stderr: str, what: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(rf"^{re.escape(what)}: (\d+)/(\d+)$", stderr, re.M)]


def test_cassettes_check_reports_progress_then_a_summary(cli: Cli) -> None:
    done = cli("cassettes", "check", "--cassettes", str(REPO_ROOT / "cassettes"), "--adapters", "mimo")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    steps = _progress_lines(done.stderr, "cassettes checked")
    assert len(steps) >= 10 and steps[-1] == (106, 106), done.stderr
    assert [a for a, _ in steps] == sorted(a for a, _ in steps)
    assert done.stdout.strip().splitlines()[-1] == "checked 106 cassette(s): no drift"


def test_schemas_reports_progress_over_the_tools(cli: Cli) -> None:
    done = cli("schemas", "--adapters", "openai-chat", "--no-fidelity", "--workers", "1", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    steps = _progress_lines(done.stderr, "schemas: tools x 1 adapters")
    assert steps and steps[-1][0] == steps[-1][1] > 1, done.stderr


def test_a_run_logged_to_a_file_reports_its_episodes_as_it_goes(cli: Cli, tmp_path: Path) -> None:
    """Not a terminal (CI's log): plain lines, never silence and never bar frames (issue 36, 8)."""
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat", "anthropic-messages"]\n')
    done = cli("run", "--mode", "record", "--target", "emulator", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    steps = _progress_lines_with_correct(done.stderr)
    assert steps and steps[-1][0] == steps[-1][1] == 4, done.stderr
    assert "\x1b[" not in done.stderr
    quiet = cli("run", "--no-progress", "--no-baseline", cwd=root)
    assert quiet.returncode == 0 and not _progress_lines_with_correct(quiet.stderr)


def _progress_lines_with_correct(stderr: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in re.findall(r"^episodes: (\d+)/(\d+), \d+ correct$", stderr, re.M)]


def test_plain_progress_comes_every_tenth_or_every_ten_seconds_and_at_the_end() -> None:
    now = [0.0]
    pace = PlainPace(seconds=10, clock=lambda: now[0])
    shown = [done for done in range(1, 1001) if pace.due(done, 1000)]
    assert shown == [100 * k for k in range(1, 11)]
    slow = PlainPace(seconds=10, clock=lambda: now[0])
    seen = []
    for done in range(1, 50):
        now[0] += 3
        if slow.due(done, 1000):
            seen.append(done)
    assert seen == [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48]
