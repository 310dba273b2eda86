"""Every command that works in a project says which one, in one line, or that there is none and
what that means; a replay with nothing to replay is one line, not a FAIL per episode (issue 36,
point 4)."""

from __future__ import annotations

from pathlib import Path

from tests._cli import Cli
from tests._shop import shop_project


def test_a_folder_without_a_project_says_so_and_a_replay_of_nothing_is_one_input_error(
    cli: Cli, tmp_path: Path
) -> None:
    ran = cli("run", "--no-baseline", "--no-progress", cwd=tmp_path, project_line=True)
    assert ran.returncode == 2, ran.stdout[-2000:]
    assert "FAIL" not in ran.stdout
    said = ran.stderr.strip().splitlines()
    assert said[0] == (
        f"xpeval: no [tool.xpeval] in {tmp_path}/pyproject.toml or above: the built-in cases, cassettes/ "
        "and reports/ here (add a [tool.xpeval] table to your pyproject.toml to choose them)"
    )
    assert said[1].startswith(f"xpeval: nothing to replay: {tmp_path / 'cassettes'} holds no cassette")
    assert not (tmp_path / "reports").exists(), "nothing written where nothing was asked"


def test_a_command_in_a_project_names_its_pyproject_and_settings(cli: Cli, tmp_path: Path) -> None:
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    listed = cli("cases", "list", cwd=root / "evals", project_line=True)
    assert listed.returncode == 0
    assert listed.stderr.splitlines()[0] == (
        "xpeval: project ../pyproject.toml [tool.xpeval]: cases cases, adapters openai-chat, "
        "cassettes ../cassettes, reports ../reports"
    )
