"""Long commands are never silent: `xpeval cassettes check` and `xpeval schemas` report their
progress on stderr as they go (a bar on a terminal, a line every twentieth elsewhere) and end
with a summary."""

from __future__ import annotations

import re

from tests._cli import Cli
from tests._corpus import REPO_ROOT


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
