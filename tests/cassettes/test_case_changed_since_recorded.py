"""An emulated recording knows the case it was rendered from: editing a case's expected answer
is told as "case changed since it was recorded", never as a pipeline bug, with a command that
re-records it and runs as printed (issue 36, point 2)."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from tests._cli import Cli
from tests._shop import shop_project


def _changed_expectation(root: Path) -> None:
    path = root / "evals" / "cases" / "orders.yaml"
    path.write_text(
        path.read_text().replace('arguments: {order: ["A1234"]}', 'arguments: {order: ["A9999"]}')
    )


def test_an_edited_expectation_is_a_changed_case_with_a_hint_that_rerecords_it(
    cli: Cli, tmp_path: Path
) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    recorded = cli("run", "--mode", "record", "--target", "emulator", "--no-progress", cwd=root)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassette = next((root / "cassettes" / "openai-chat").rglob("orders_simple_01.yaml"))
    assert yaml.safe_load(cassette.read_text())["metadata"]["xpeval"]["case_digest"]
    assert cli("gate", "--update-baseline", cwd=root).returncode == 0

    _changed_expectation(root)
    replayed = cli("run", "--no-progress", cwd=root)
    printed = replayed.stdout + replayed.stderr
    assert replayed.returncode == 1, printed
    assert "case orders_simple_01 changed since it was recorded" in printed
    assert "pipeline bug" not in printed
    (hint,) = {
        line.split("record it with: ", 1)[1] for line in printed.splitlines() if "record it with: " in line
    }
    command = shlex.split(hint)
    assert command[:2] == ["xpeval", "run"] and command[command.index("--target") + 1] == "emulator"

    rerecorded = cli(*command[1:], "--no-progress", cwd=root)
    assert rerecorded.returncode == 0, rerecorded.stdout + rerecorded.stderr
    assert cli("gate", "--update-baseline", cwd=root).returncode == 0
    again = cli("run", "--no-progress", cwd=root)
    assert again.returncode == 0, again.stdout + again.stderr


NEW_CASE = """
  - id: orders_simple_02
    category: simple
    tools: [*lookup]
    messages:
      - {role: user, content: "Where is my order A7777?"}
    expected:
      calls:
        - name: lookup_order
          arguments: {order: ["A7777"]}
"""


def test_a_new_cases_hint_uses_the_target_of_the_adapters_other_recordings_and_runs(
    cli: Cli, tmp_path: Path
) -> None:
    """Issue 36, point 3: a project recorded with the emulator gets an emulator hint (not a
    provider it has no key for), whole, and no row of a source nothing asked for."""
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    assert cli("run", "--mode", "record", "--target", "emulator", "--no-progress", cwd=root).returncode == 0
    assert cli("gate", "--update-baseline", cwd=root).returncode == 0
    cases = root / "evals" / "cases" / "orders.yaml"
    cases.write_text(cases.read_text() + NEW_CASE)

    replayed = cli("run", "--no-progress", cwd=root)
    printed = replayed.stdout + replayed.stderr
    assert replayed.returncode == 1, printed
    assert "cassette|openai-chat" not in printed, "no row of a source nothing recorded"
    hints = [
        line.split("record it with: ", 1)[1] for line in printed.splitlines() if "record it with: " in line
    ]
    assert hints and all(hint.endswith(str(root / "evals" / "cases")) for hint in hints), hints
    command = shlex.split(hints[0])
    assert command[command.index("--target") + 1] == "emulator"
    assert cli(*command[1:], "--no-progress", cwd=root).returncode == 0
    again = cli("run", "--no-progress", cwd=root)
    assert again.returncode == 0, again.stdout + again.stderr
