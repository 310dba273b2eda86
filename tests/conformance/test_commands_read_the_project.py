"""Every command reads the project's `[tool.xpeval]` (cases, cassettes, reports, adapters), and
every hint it prints runs as printed there (issue 20, "Every command reads the project")."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests._cli import Cli
from tests._shop import shop_project


def shop(tmp_path: Path) -> Path:
    """A project with its own cases, cassettes in `recordings/` and one adapter."""
    return shop_project(
        tmp_path,
        'cases = "evals/cases"\ncassettes = "recordings"\nreports = "out"\nadapters = ["openai-chat"]\n',
    )


def test_cases_list_lists_the_projects_cases(tmp_path: Path, cli: Cli) -> None:
    root = shop(tmp_path)
    listed = cli("cases", "list", "--json", cwd=root / "evals")
    assert listed.returncode == 0, listed.stderr
    assert [row["id"] for row in json.loads(listed.stdout)] == ["orders_simple_01", "orders_irrelevance_01"]


def test_cassettes_check_checks_the_projects_cases_and_adapters_and_its_hints_run_as_printed(
    tmp_path: Path, cli: Cli
) -> None:
    root = shop(tmp_path)
    recorded = cli("run", "--mode", "record", "--target", "emulator", "--cases", "orders_simple_01", cwd=root)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (root / "recordings" / "openai-chat").is_dir()

    checked = cli("cassettes", "check", cwd=root)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert lines[-1] == "checked 1 cassette(s): 1 missing", lines[-1]
    assert not any(line.startswith("ORPHAN") for line in lines)
    (missing,) = [line for line in lines if line.startswith("MISSING")]
    assert missing.startswith("MISSING openai-chat/") and missing.endswith("/orders_irrelevance_01")
    hint = next(line for line in lines if "record it with: " in line).split("record it with: ", 1)[1]
    assert "--cassettes" in shlex.split(hint) and str(root / "recordings") in shlex.split(hint)

    rerecorded = cli(*shlex.split(hint)[1:], "--target", "emulator", cwd=root)
    assert rerecorded.returncode == 0, rerecorded.stdout + rerecorded.stderr
    again = cli("cassettes", "check", cwd=root)
    assert (again.returncode, again.stdout.splitlines()[-1]) == (0, "checked 2 cassette(s): no drift")


TOOLS = (
    '[{"type": "function", "function": {"name": "lookup", "description": "Look up an order.", '
    '"parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}]'
)


def test_schemas_and_history_follow_the_projects_adapters_and_reports(tmp_path: Path, cli: Cli) -> None:
    root = shop(tmp_path)
    (root / "tools").mkdir()
    (root / "tools" / "lookup.json").write_text(TOOLS)
    measured = cli("schemas", "--tools", "tools", "--no-fidelity", "--workers", "1", "--json", cwd=root)
    assert measured.returncode == 0, measured.stderr
    assert {json.loads(line)["adapter"] for line in measured.stdout.splitlines()} == {"openai-chat"}
    reported = cli("schemas", "--tools", "tools", "--no-fidelity", "--workers", "1", cwd=root)
    assert reported.returncode == 0, reported.stderr
    assert (root / "out" / "schema_acceptance.csv").is_file() and not (root / "reports").exists()
    history = cli("history", cwd=root)
    assert f"no runs in {root / 'out' / 'history'}" in history.stderr + history.stdout
