"""The case set the gate and the report judge a run on is the project's (`[tool.xpeval]` cases,
or `--case-dir`), never the folder a results header names: a results file from another CI job
must not choose what is read. A header whose recorded cases differ from the project's is refused
in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import without_project_line, xpeval
from tests._shop import ORDER_CASES, shop_project


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A project with its own case folder and a complete run of it (emulated answers)."""
    root = shop_project(tmp_path, 'cases = "evals/cases"\nadapters = ["openai-chat"]\n')
    ran = xpeval(
        "run", "--mode", "record", "--target", "emulator", "--no-baseline", "--no-progress", cwd=root
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return root


def _header_says(results: Path, **config: object) -> None:
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["config"].update(config)
    results.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")


def test_a_header_naming_the_root_folder_as_its_case_set_reads_nothing_there(shop: Path) -> None:
    _header_says(shop / "reports" / "results.jsonl", case_set="/")

    gate = xpeval("gate", "--no-baseline", cwd=shop, timeout=120)
    report = xpeval("report", cwd=shop, timeout=120)

    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "gate: passed" in gate.stdout
    assert report.returncode == 0, report.stderr
    assert "Traceback" not in gate.stderr + report.stderr


def test_a_run_whose_recorded_cases_are_not_the_projects_is_refused_in_one_line(shop: Path) -> None:
    (shop / "evals" / "cases" / "orders.yaml").write_text(ORDER_CASES.replace("A1234", "A9999"))

    for command in (["gate", "--no-baseline"], ["report"]):
        done = xpeval(*command, cwd=shop, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        lines = without_project_line(done.stderr).strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "not the project's case set 'evals/cases'" in lines[0]
        assert "1 of its cases differ (orders_simple_01)" in lines[0]
