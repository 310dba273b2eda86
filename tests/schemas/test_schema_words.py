"""One vocabulary for what an adapter does with a tool's schema, and a report that says which tools
it shows (issue 36, point 9): in a team's own project, `xpeval schemas --tools` counts tools per
adapter in the words of `evals/acceptance/outcomes.py`, and `xpeval report` shows the same words
with the same counts, naming the tools' source and the command that measured them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd

from tests._cli import Cli
from tests.report.conftest import write_run
from xpeval.evals.acceptance.outcomes import SCHEMA_OUTCOMES
from xpeval.evals.acceptance.table import summary

OWN_TOOLS = Path(__file__).resolve().parents[1] / "docs" / "projects" / "own-tools"
ADAPTERS = "openai-responses,moonshot,vertex-ai,anthropic-messages"


def _measured(cli: Cli, tmp_path: Path) -> tuple[Path, str]:
    project = Path(shutil.copytree(OWN_TOOLS, tmp_path / "project"))
    ran = cli(
        "schemas",
        "--tools",
        "tools/",
        "openai_tools.json",
        "--no-fidelity",
        "--adapters",
        ADAPTERS,
        cwd=project,
    )
    assert ran.returncode == 0, ran.stderr
    return project, ran.stdout


def _html_counts(page: str) -> dict[str, dict[str, str]]:
    """The report's outcome table: adapter -> label -> count."""
    table = page.split('<section id="schemas">', 1)[1].split("</section>", 1)[0]
    head = re.findall(r"<th>([^<]+)</th>", table)
    rows = [re.findall(r"<td>([^<]*)</td>", row) for row in re.findall(r"<tr>(<td>.*?)</tr>", table)]
    return {cells[0]: dict(zip(head[1:], cells[1:], strict=True)) for cells in rows}


def test_schemas_and_the_report_count_outcomes_in_the_same_words(cli: Cli, tmp_path: Path) -> None:
    project, printed = _measured(cli, tmp_path)
    labels = [outcome.label for outcome in SCHEMA_OUTCOMES]
    assert all(label in printed for label in labels), printed
    assert "lossy" not in printed

    results = write_run(tmp_path / "results.jsonl")
    made = cli("report", "--results", str(results), "--out", "report.html", cwd=project)
    assert made.returncode == 0, made.stderr
    page = (project / "report.html").read_text(encoding="utf-8")
    assert "loss of meaning" not in page

    expected = summary(pd.read_csv(project / "reports" / "schema_acceptance.csv"))
    shown = _html_counts(page)
    for record in expected.to_dict("records"):
        for outcome in SCHEMA_OUTCOMES:
            assert shown[record["adapter"]][outcome.label] == str(record[outcome.column]), (
                record["adapter"],
                outcome.label,
            )
    assert sum(int(row["guidance loss"]) for row in shown.values()) > 0  # the words are exercised


def test_the_reports_schema_section_names_its_tools_and_the_command_that_measured_them(
    cli: Cli, tmp_path: Path
) -> None:
    project, _ = _measured(cli, tmp_path)
    results = write_run(tmp_path / "results.jsonl")
    assert cli("report", "--results", str(results), "--out", "report.html", cwd=project).returncode == 0
    section = (project / "report.html").read_text(encoding="utf-8").split('<section id="schemas">', 1)[1]

    assert "4 tools x 4 adapters, the tools from <code>tools, openai_tools.json</code>" in section
    assert (
        f"measured by <code>xpeval schemas --tools tools openai_tools.json --adapters {ADAPTERS}</code>"
        in (section)
    )
    assert "in the corpus" not in section
