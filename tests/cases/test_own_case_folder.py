"""A user's own case folder in their own project: validated, recorded, replayed, gated against
its own baseline (never the built-in one), and every printed hint runs as printed."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from tests._cli import Cli, Ran
from tests._corpus import REPO_ROOT
from tests._shop import shop_project


def project(tmp_path: Path) -> Path:
    return shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat", "anthropic-messages"]\n')


def test_a_case_folder_records_replays_and_passes_its_own_gate_and_hints_run_as_printed(
    tmp_path: Path, cli: Cli
) -> None:
    root = project(tmp_path)

    def xpeval(*args: str, cwd: Path = root) -> Ran:
        return cli(*args, cwd=cwd)

    assert xpeval("cases", "validate", "evals/cases").returncode == 0

    recorded = xpeval("run", "--mode", "record", "--target", "emulator", "--no-progress")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "in the baseline but not in this run" not in recorded.stdout, "never the built-in baseline"
    assert "conformance only" in recorded.stdout

    updated = xpeval("gate", "--update-baseline")
    assert updated.returncode == 0, updated.stderr
    assert (root / "evals" / "cases" / "baseline.json").exists(), "the case folder keeps its own baseline"

    replayed = xpeval("run", "--no-progress", cwd=root / "evals")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "conformance only" not in replayed.stdout, "compared with the case folder's baseline"

    changed = (
        (root / "evals" / "cases" / "orders.yaml").read_text().replace("Where is my order", "Where's order")
    )
    (root / "evals" / "cases" / "orders.yaml").write_text(changed)
    drifted = xpeval("run", "--no-progress")
    assert drifted.returncode == 1
    hints = {
        line.split("record it with: ", 1)[1]
        for line in drifted.stdout.splitlines()
        if "record it with: " in line
    }
    assert hints, drifted.stdout
    for hint in hints:
        command = shlex.split(hint)
        assert command[:2] == ["xpeval", "run"] and "--target" in command
        done = xpeval(*command[1:], "--no-progress")
        assert done.returncode == 0, f"{hint}\n{done.stdout}{done.stderr}"
    again = xpeval("run", "--no-progress")
    assert again.returncode == 0, again.stdout


def test_an_empty_case_folder_says_so(tmp_path: Path, cli: Cli) -> None:
    root = project(tmp_path)
    (root / "evals" / "cases" / "orders.yaml").unlink()
    done = cli("run", "--no-progress", cwd=root)
    assert done.returncode == 2 and "no case files" in done.stderr


def test_the_case_file_schema_accepts_every_built_in_file() -> None:
    import jsonschema

    from xpeval.evals.commands.cases import case_file_schema

    validator = jsonschema.Draft202012Validator(case_file_schema())
    for path in (REPO_ROOT / "evals" / "cases" / "builtin").glob("*.yaml"):
        assert not list(validator.iter_errors(yaml.safe_load(path.read_text()))), path
    assert list(validator.iter_errors({"cases": [{"id": "x"}]})), "a case without its fields is refused"


def test_validate_names_every_broken_file(tmp_path: Path, cli: Cli) -> None:
    root = project(tmp_path)
    (root / "evals" / "cases" / "broken.yaml").write_text("cases:\n  - id: b1\n    category: nonsense\n")
    done = cli("cases", "validate", "evals/cases", cwd=root)
    assert done.returncode == 2 and "broken.yaml" in done.stderr and "Traceback" not in done.stderr
