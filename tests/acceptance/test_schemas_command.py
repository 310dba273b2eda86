"""`xpeval schemas`: every registered adapter x every schema file, as JSON lines or reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import without_project_line
from tests._corpus import corpus_path
from xpeval.adapters.registry import ADAPTER_REGISTRY
from xpeval.evals.acceptance.sources.tool_files import BUILTIN_CORPUS
from xpeval.evals.cli import main

ISSUE_FIELDS = {
    "adapter", "schema", "verdict", "losses", "violations", "loss_rate", "false_rejections", "rewritten",
    "seconds",
}  # fmt: skip
WEATHER = {
    "name": "get_weather",
    "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["schemas", "--workers", "1", *args])
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines() if line.startswith("{")]
    return code, lines, without_project_line(captured.err)


def _corpus(tmp_path: Path, files: dict[str, Any]) -> Path:
    for name, content in files.items():
        path = tmp_path / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return tmp_path


def test_json_prints_one_line_per_adapter_and_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path, {"a/weather": WEATHER, "b": {**WEATHER, "name": "b"}, "MANIFEST": {"x": 1}})
    (tmp_path / "README.md").write_text("not a schema")
    code, lines, err = _run(capsys, "--json", "--corpus", str(corpus), "--examples", "3")
    assert code == 0
    assert len(lines) == len(ADAPTER_REGISTRY) * 2
    assert {(line["adapter"], line["schema"]) for line in lines} == {
        (adapter, schema) for adapter in ADAPTER_REGISTRY for schema in ("a/weather", "b")
    }
    assert all(set(line) >= ISSUE_FIELDS for line in lines)
    assert "schemas:" in err  # progress goes to stderr, never into the JSON


def test_rewritten_carries_the_definition_as_the_wire_sends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path, {"weather": WEATHER})
    _, lines, _ = _run(
        capsys,
        "--json",
        "--corpus",
        str(corpus),
        "--adapters",
        "openai-chat",
        "google-genai",
        "anthropic-messages",
    )
    sent = {line["adapter"]: line["rewritten"] for line in lines}
    assert sent["openai-chat"]["function"]["parameters"]["properties"] == {"city": {"type": "string"}}
    assert "parametersJsonSchema" in sent["google-genai"]
    assert "input_schema" in sent["anthropic-messages"]


def test_adapters_can_be_named_and_an_unknown_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path, {"weather": WEATHER})
    code, lines, _ = _run(capsys, "--json", "--corpus", str(corpus), "--adapters", "moonshot,openai-chat")
    assert code == 0 and [line["adapter"] for line in lines] == ["moonshot", "openai-chat"]
    code, lines, err = _run(capsys, "--json", "--corpus", str(corpus), "--adapters", "openai-chat", "nope")
    assert code != 0 and lines == []
    assert "Unknown adapter: nope" in err


def test_a_missing_corpus_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--json", "--corpus", str(tmp_path / "absent"))
    assert code == 2 and "Corpus folder not found" in err and "Traceback" not in err


def test_unreadable_corpus_files_are_an_input_error_naming_each_never_a_refusal_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = "[" * 30_000 + "]" * 30_000
    corpus = _corpus(
        tmp_path,
        {"broken": "{not json", "list": "[1, 2]", "deep": deep, "no_params": {"name": "x"}, "ok": WEATHER},
    )
    code, lines, err = _run(capsys, "--json", "--corpus", str(corpus), "--adapters", "openai-chat")
    assert code == 2 and lines == [] and "Traceback" not in err
    reasons = dict(line.removeprefix("xpeval: ").split(": ", 1) for line in err.strip().splitlines())
    assert set(reasons) == {
        str(tmp_path / f"{name}.json") for name in ("broken", "list", "deep", "no_params")
    }
    assert reasons[str(tmp_path / "broken.json")].startswith("not JSON")
    assert "not a tool definition" in reasons[str(tmp_path / "list.json")]
    assert "nest deeper" in reasons[str(tmp_path / "deep.json")]
    assert '"parameters"' in reasons[str(tmp_path / "no_params.json")]


def test_a_twenty_thousand_deep_schema_file_comes_back_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    levels = 20_000
    inner = '{"type": "object", "properties": {"a": ' * levels + '{"type": "string"}' + "}}" * levels
    corpus = _corpus(tmp_path, {"deep": '{"name": "deep", "description": "", "parameters": ' + inner + "}"})
    code, lines, err = _run(capsys, "--json", "--corpus", str(corpus), "--examples", "2")
    assert code == 0 and "Traceback" not in err and len(lines) == len(ADAPTER_REGISTRY)
    for line in lines:
        assert line["verdict"] == "refused" or line["losses"] or line["violations"], line["adapter"]


def test_the_raw_bfcl_negative_control_is_refused_by_every_adapter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, lines, _ = _run(capsys, "--json", "--no-fidelity")
    control = [line for line in lines if line["schema"] == "awkward/raw_bfcl_types"]
    assert len(control) == len(ADAPTER_REGISTRY)
    assert all(line["verdict"] == "refused" and line["refusal"] for line in control)


def test_nothing_in_the_projects_corpus_is_sent_with_a_rule_broken(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, lines, _ = _run(capsys, "--json", "--no-fidelity")
    assert len(lines) == len(ADAPTER_REGISTRY) * len(list(BUILTIN_CORPUS.rglob("*.json")))
    offending = [
        (line["adapter"], line["schema"], [v["rule"] for v in line["violations"]])
        for line in lines
        if line["verdict"] != "refused" and line["violations"]
    ]
    assert offending == []


@pytest.mark.corpus
def test_the_shared_corpus_negative_controls_are_refused_by_every_adapter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus = corpus_path("schemas", "bfcl-raw")
    _, lines, _ = _run(capsys, "--json", "--no-fidelity", "--corpus", str(corpus))
    assert lines and all(line["verdict"] == "refused" and line["refusal"] for line in lines)


def test_without_json_it_writes_the_reports_and_says_where_numbers_come_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "corpus", {"weather": WEATHER})
    reports = tmp_path / "reports"
    code, _, _ = _run(
        capsys, "--corpus", str(corpus), "--reports", str(reports), "--adapters", "openai-responses"
    )
    assert code == 0
    markdown = (reports / "schema_acceptance.md").read_text()
    assert "not live provider answers" in markdown and "openai-responses" in markdown
    csv = (reports / "schema_acceptance.csv").read_text().splitlines()
    assert csv[0].startswith("adapter,schema,verdict") and len(csv) == 2


def test_parallel_workers_give_the_same_lines_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path, {"a": WEATHER, "b": {**WEATHER, "name": "b"}, "c": {**WEATHER, "name": "c.d"}})
    args = ["--json", "--no-fidelity", "--corpus", str(corpus), "--adapters", "moonshot", "vertex-ai"]
    _, one, _ = _run(capsys, *args)
    main(["schemas", "--workers", "2", *args])
    two = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    def comparable(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in line.items() if k != "seconds"} for line in lines]

    assert comparable(two) == comparable(one) and len(one) == 6


def test_an_open_root_sent_without_parameters_is_a_reported_narrowing_not_a_false_rejection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_root = {"type": "object", "additionalProperties": True}
    corpus = _corpus(tmp_path, {"open": {"name": "get_env", "description": "", "parameters": open_root}})
    # The sample is drawn for at most --seconds; the default 0.3 s drew only `{}` on a loaded
    # machine, which no narrowing touches: give it all 20 examples.
    args = ["--json", "--corpus", str(corpus), "--adapters", "vertex-ai", "--seconds", "60"]
    code, lines, _ = _run(capsys, *args)
    assert code == 0
    [pair] = lines
    assert [loss["action"] for loss in pair["losses"]] == ["narrowed"]
    assert pair["false_rejections"] == 0
    assert pair["narrowed"] > 0


def _catalog(tmp_path: Path, count: int) -> Path:
    tools = [{**WEATHER, "name": f"get_weather_{index}"} for index in range(count)]
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(tools))
    return path


def test_a_large_catalog_prints_the_summary_and_the_request_caps_not_a_row_per_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = _catalog(tmp_path, 513)  # more than OpenAI's 128 and Gemini's 512 tools per request
    adapters = ("openai-chat", "google-genai", "anthropic-messages")
    code = main(
        [
            "schemas",
            "--tools",
            str(catalog),
            "--no-fidelity",
            "--adapters",
            *adapters,
            "--reports",
            str(tmp_path),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    # docs/provider-schema-rules.md: OpenAI 128 (§1), Gemini 512 (§6); none found for Anthropic
    assert "openai-chat 5 (at most 128)" in err and "google-genai 2 (at most 512)" in err
    assert "anthropic-messages" not in err.split("requests needed:")[1]
    assert len(err.splitlines()) < 30  # progress and one line per finding, none per tool
    assert "get_weather_1" not in out  # one summary, no line per tool
    md = (tmp_path / "schema_acceptance.md").read_text()
    assert "get_weather_512" in md  # every tool is still in the written report


def test_the_per_tool_table_is_left_out_above_the_threshold_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = _catalog(tmp_path, 60)
    common = (
        "--tools",
        str(catalog),
        "--no-fidelity",
        "--adapters",
        "openai-chat",
        "--reports",
        str(tmp_path),
    )
    assert main(["schemas", "--workers", "1", *common]) == 0
    out = capsys.readouterr().out
    assert "get_weather_59" not in out and "60 tools: the tool x adapter table is in the md" in out
    assert "requests" in out  # the summary's request column
    assert main(["schemas", "--workers", "1", "--per-tool", *common]) == 0
    assert "get_weather_59" in capsys.readouterr().out
