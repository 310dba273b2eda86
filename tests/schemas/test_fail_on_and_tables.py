"""`--fail-on refused|loss` as a CI check, and the tool x adapter table in the terminal and in
reports/schema_acceptance.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.schemas._cli import WEATHER_SCHEMA, schemas, write

RECURSIVE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        }
    },
}
FORMATTED = {
    "type": "object",
    "properties": {"host": {"type": "string", "format": "hostname"}},
    "required": ["host"],
}
"""Gemini `parameters` take only a few formats (docs/provider-schema-rules.md §6): vertex-ai moves
`hostname` into the description, a reported loss."""


def _tools(tmp_path: Path) -> Path:
    return write(
        tmp_path / "server.json",
        {
            "tools": [
                {"name": "get_weather", "inputSchema": WEATHER_SCHEMA},
                {"name": "tree", "inputSchema": RECURSIVE},
                {"name": "schedule", "inputSchema": FORMATTED},
            ]
        },
    )


def _vertex(tmp_path: Path, *args: str) -> list[str]:
    return [
        "--no-fidelity",
        "--tools",
        str(_tools(tmp_path)),
        "--adapters",
        "vertex-ai",
        "google-genai",
        *args,
    ]


def test_fail_on_refused_exits_1_naming_each_refused_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines, _, err = schemas(capsys, "--json", *_vertex(tmp_path, "--fail-on", "refused"))
    assert code == 1 and len(lines) == 6
    failing = [line for line in err.splitlines() if line.startswith("  ")]
    tree = next(line for line in lines if line["schema"] == "server#tree" and line["verdict"] == "refused")
    assert tree["refusal_rule"] == "gemini.parameters.recursion"
    assert failing == [
        f"  server#tree on vertex-ai: refused: {tree['refusal']} "
        f"[rule gemini.parameters.recursion; {tree['refusal_source']}]"
    ]
    assert "--fail-on refused: 1 pair(s) of 1 tool(s)" in err


def test_fail_on_loss_names_pairs_sent_with_a_loss_of_meaning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _, err = schemas(capsys, "--json", *_vertex(tmp_path, "--fail-on", "loss"))
    assert code == 1
    failing = [line for line in err.splitlines() if line.startswith("  ")]
    assert failing == ["  server#schedule on vertex-ai: 1 lost (format)"]


def test_fail_on_takes_a_comma_list_or_repeats_and_passes_when_nothing_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _, err = schemas(capsys, "--json", *_vertex(tmp_path, "--fail-on", "refused,loss"))
    assert code == 1 and len([line for line in err.splitlines() if line.startswith("  ")]) == 2
    code, _, _, err = schemas(
        capsys, "--json", *_vertex(tmp_path, "--fail-on", "loss", "--fail-on", "refused")
    )
    assert code == 1 and len([line for line in err.splitlines() if line.startswith("  ")]) == 2
    weather = write(tmp_path / "weather.json", {"name": "get_weather", "inputSchema": WEATHER_SCHEMA})
    code, _, _, err = schemas(
        capsys, "--json", "--no-fidelity", "--tools", str(weather), "--fail-on", "refused"
    )
    assert code == 0 and "--fail-on" not in err


def test_an_unknown_fail_on_outcome_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        schemas(capsys, "--fail-on", "refused,sometimes")
    assert exited.value.code == 2
    assert (
        "sometimes: not an outcome (one of: refused, loss, validation, guidance)" in capsys.readouterr().err
    )


def test_the_terminal_shows_a_tool_by_adapter_table_and_the_refusal_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    code, _, out, _ = schemas(capsys, *_vertex(tmp_path, "--reports", str(reports)))
    assert code == 0
    rows = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
        for line in out.splitlines()
        if line.startswith("│ server#")
    }
    assert rows == {
        "server#get_weather": ["as-is", "as-is"],
        "server#tree": ["refused R1", "as-is"],
        "server#schedule": ["1 lost", "as-is"],
    }
    assert "R1: the schema is recursive" in out
    assert "│ vertex-ai " in out, "the per-adapter summary is still shown"


def test_the_markdown_report_has_the_table_with_lost_keywords_and_the_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    schemas(capsys, *_vertex(tmp_path, "--reports", str(reports)))
    markdown = (reports / "schema_acceptance.md").read_text()
    per_tool = markdown[markdown.index("## Per tool") :]
    cells = {
        parts[1].strip(): [cell.strip() for cell in parts[2:-1]]
        for line in per_tool.splitlines()
        if line.startswith("| server#")
        for parts in [line.split("|")]
    }
    assert cells == {
        "server#get_weather": ["as-is", "as-is"],
        "server#tree": ["refused (R1)", "as-is"],
        "server#schedule": ["rewritten: 1 lost (validation: format)", "as-is"],
    }
    assert "- **R1**: the schema is recursive" in per_tool
    assert '[rule gemini.parameters.recursion; docs/provider-schema-rules.md §6: "' in per_tool
    assert "| vertex-ai " in markdown[: markdown.index("## Per tool")], "the per-adapter summary stays first"
    csv = (reports / "schema_acceptance.csv").read_text().splitlines()
    # new columns go last (readers select by name)
    assert csv[0].startswith("adapter,schema,verdict") and csv[0].endswith(
        "lost,lost_keywords,tool,source,form,validation_lost,validation_keywords,guidance_lost,guidance_keywords,"
        "refusal_rule,refusal_source,tools_from,measured_by"
    )


def test_a_pair_sent_with_a_rule_broken_is_never_as_is_or_exact_and_fails_as_refused() -> None:
    from xpeval.evals.acceptance.checker import Violation
    from xpeval.evals.acceptance.measure import PairResult
    from xpeval.evals.acceptance.table import cell, failing, pairs_frame

    broken = Violation(
        pointer="/function/parameters/properties/t",
        rule="openai.array-missing-items",
        message="array schema missing items",
        source="[err] ...",
    )
    rows = [
        PairResult(adapter="openai-chat", schema="tuple", verdict="rewritten", violations=[broken]),
        PairResult(adapter="openai-chat", schema="plain", verdict="as-is", violations=[broken]),
    ]
    pairs = pairs_frame(rows)
    cells = [cell(record, {}) for record in pairs.itertuples(index=False)]
    assert cells == [
        "rewritten, violates (openai.array-missing-items)",
        "as-is, violates (openai.array-missing-items)",
    ]
    assert [cell(record, {}, short=True) for record in pairs.itertuples(index=False)] == ["violates 1"] * 2
    assert list(failing(pairs, ["refused"])["schema"]) == ["tuple", "plain"]
    assert failing(pairs, ["loss"]).empty


def test_fail_on_takes_a_severity_and_the_cells_show_it() -> None:
    from xpeval.evals.acceptance.measure import PairResult
    from xpeval.evals.acceptance.table import cell, failing, pairs_frame

    closed = {"pointer": "/additionalProperties", "keyword": "additionalProperties", "action": "narrowed"}
    guidance = [
        {**closed, "severity": "guidance"},
        {"pointer": "/default", "keyword": "default", "action": "dropped"},
    ]
    bound = {"pointer": "/properties/n/minimum", "keyword": "minimum", "action": "dropped"}
    rows = [
        PairResult(adapter="openai-responses", schema="defaults", verdict="rewritten", losses=guidance),
        PairResult(
            adapter="openai-responses", schema="bounds", verdict="rewritten", losses=[*guidance, bound]
        ),
    ]
    pairs = pairs_frame(rows)
    assert list(failing(pairs, ["validation"])["schema"]) == ["bounds"]
    assert list(failing(pairs, ["guidance"])["schema"]) == ["defaults", "bounds"]
    assert list(failing(pairs, ["loss"])["schema"]) == ["defaults", "bounds"]
    full = [cell(record, {}) for record in pairs.itertuples(index=False)]
    assert full == [
        "rewritten: 2 lost (guidance: additionalProperties default)",
        "rewritten: 3 lost (validation: minimum; guidance: additionalProperties default)",
    ]
    assert [cell(record, {}, short=True) for record in pairs.itertuples(index=False)] == [
        "2 guidance",
        "1 lost +2 guidance",
    ]


def test_a_tool_with_no_arguments_loses_nothing_on_gemini_parameters() -> None:
    from xpeval.adapters.schema import apply_dialect

    for no_arguments in (
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {}, "required": []},
    ):
        assert apply_dialect("gemini-openapi", no_arguments).losses == []
    free_form = apply_dialect("gemini-openapi", {"type": "object", "additionalProperties": True})
    assert [(loss.keyword, loss.severity) for loss in free_form.losses] == [("properties", "validation")]
