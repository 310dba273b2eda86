"""`xpeval schemas --mcp SERVER`: a live MCP server's tools, read through the official SDK, on
stdio and on streamable HTTP; a server that cannot be read is an input error naming it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.schemas._cli import schemas
from tests.schemas._servers import (
    DEEP_SERVER,
    ENDLESS_SERVER,
    GIANT_SERVER,
    PAGED_SERVER,
    command,
    http_tools_server,
    script,
    stdio_tools_server,
)

TOOLS = ["get_weather", "build_tree", "set_labels"]


def test_a_stdio_server_gives_a_verdict_per_tool_and_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = stdio_tools_server(tmp_path)
    code, lines, _, err = schemas(capsys, "--json", "--no-fidelity", "--mcp", server)
    assert code == 0, err
    from xpeval.adapters.registry import adapter_ids

    assert [(line["schema"], line["adapter"]) for line in lines] == [
        (tool, adapter) for tool in TOOLS for adapter in adapter_ids()
    ]
    assert {line["form"] for line in lines} == {"mcp"}
    assert {line["source"] for line in lines} == {f"mcp: {server}"}
    verdicts = {(line["schema"], line["adapter"]): line for line in lines}
    assert verdicts["build_tree", "vertex-ai"]["verdict"] == "refused"
    assert "recursive" in verdicts["build_tree", "vertex-ai"]["refusal"]
    assert verdicts["set_labels", "openai-responses"]["verdict"] == "refused"
    assert verdicts["get_weather", "vertex-ai"]["verdict"] == "as-is"


def test_fail_on_refused_names_the_tool_gemini_parameters_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = stdio_tools_server(tmp_path)
    code, _, out, err = schemas(
        capsys, "--no-fidelity", "--mcp", server, "--adapters", "vertex-ai", "--fail-on", "refused",
        "--reports", str(tmp_path / "reports"),
    )  # fmt: skip
    assert code == 1
    assert [line for line in err.splitlines() if line.startswith("  ")] == [
        "  build_tree on vertex-ai: refused: the schema is recursive ($ref '#/$defs/Node' at "
        "/$defs/Node/properties/children/items refers back to itself); Gemini parameters (OpenAPI "
        "subset) has no references, so it cannot be written [rule gemini.parameters.recursion; "
        'docs/provider-schema-rules.md §6: "Seen for additionalProperties, $schema, propertyNames, const, '
        '$ref, if"]',
        "  set_labels on vertex-ai: refused: the object at /properties/labels declares no properties "
        "(a free-form object); Gemini parameters (OpenAPI subset) needs non-empty properties on every "
        "object (§6) [rule gemini.parameters.free-form-object; docs/provider-schema-rules.md §6: "
        '"A nested free-form object cannot be written"]',
    ]
    assert "│ build_tree " in out and "refused R1" in out


def test_a_streamable_http_server_on_loopback_is_read_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with http_tools_server(tmp_path) as url:
        code, lines, _, err = schemas(
            capsys, "--json", "--no-fidelity", "--mcp", url, "--adapters", "vertex-ai", "--fail-on", "refused"
        )
    assert code == 1, err
    assert [(line["schema"], line["verdict"]) for line in lines] == [
        ("get_weather", "as-is"), ("build_tree", "refused"), ("set_labels", "refused"),
    ]  # fmt: skip
    assert {line["source"] for line in lines} == {f"mcp: {url}"}
    assert "  build_tree on vertex-ai: refused" in err


def test_every_page_of_tools_list_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = command(script(tmp_path, "paged.py", PAGED_SERVER))
    code, lines, _, err = schemas(
        capsys, "--json", "--no-fidelity", "--mcp", server, "--adapters", "openai-chat"
    )
    assert code == 0, err
    assert [line["schema"] for line in lines] == [f"tool_{i}" for i in range(5)]


def test_a_cursor_that_never_moves_on_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = command(script(tmp_path, "paged.py", PAGED_SERVER), "--loop")
    code, lines, _, err = schemas(capsys, "--json", "--mcp", server)
    assert code == 2 and lines == []
    assert err.strip() == f"xpeval: MCP server {server}: tools/list pagination loops (cursor '1' came back)"


def test_a_server_that_pages_forever_is_refused_at_the_page_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = command(script(tmp_path, "endless.py", ENDLESS_SERVER), "1", "10")
    code, lines, _, err = schemas(capsys, "--json", "--mcp", server)
    assert code == 2 and lines == []
    assert err.strip() == (
        f"xpeval: MCP server {server}: tools/list still has more pages after 50 (the cap on pages read)"
    )


def test_a_server_listing_more_than_the_size_cap_is_refused_as_soon_as_it_passes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.xpeval]\nmax_input_mb = 2\n")  # 256 KB of tools
    monkeypatch.chdir(project)
    server = command(script(tmp_path, "endless.py", ENDLESS_SERVER), "20", "10000")  # 200 KB a page
    code, lines, _, err = schemas(capsys, "--json", "--mcp", server)
    assert code == 2 and lines == []
    assert err.strip() == (
        f"xpeval: MCP server {server}: tools/list lists more than 0.25 MB of tool definitions (an eighth "
        "of max_input_mb: raise max_input_mb in [tool.xpeval] if it is genuine)"
    )


def test_one_message_above_the_cap_is_refused_before_it_is_read_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.xpeval]\nmax_input_mb = 2\n")  # 256 KB a message
    monkeypatch.chdir(project)
    server = command(script(tmp_path, "giant.py", GIANT_SERVER), str(64 << 20))  # one 64 MB line
    started = time.monotonic()
    code, lines, _, err = schemas(capsys, "--json", "--mcp", server)
    assert code == 2 and lines == []
    assert err.strip() == (
        f"xpeval: MCP server {server}: the server sent a message of more than 0.25 MB (an eighth of "
        "max_input_mb, the cap on one message and on all tools listed)"
    )
    assert time.monotonic() - started < 25, "refused as it came, not after the server wrote it all"


def test_tools_from_a_server_and_from_files_are_measured_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "more.json"
    tools.write_text('{"name": "lookup", "input_schema": {"type": "object", "properties": {}}}')
    code, lines, _, err = schemas(
        capsys, "--json", "--no-fidelity", "--tools", str(tools), "--mcp", stdio_tools_server(tmp_path),
        "--adapters", "openai-chat",
    )  # fmt: skip
    assert code == 0, err
    assert [line["schema"] for line in lines] == ["more", *TOOLS]


@pytest.mark.parametrize(
    ("program", "why"),
    [
        ("import sys; print('no such database', file=sys.stderr); sys.exit(3)",
         "the server closed the connection before answering (it exited, or is not an MCP server); "
         "its stderr ends: no such database"),
        ("print('hello, I am not MCP', flush=True); import time; time.sleep(60)",
         "no answer within 2s (start, initialize and tools/list); what it wrote to stdout is not JSON-RPC"),
    ],
    ids=["exits", "not-mcp"],
)  # fmt: skip
def test_a_server_that_exits_or_does_not_speak_mcp_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], program: str, why: str
) -> None:
    server = command(script(tmp_path, "bad_server.py", program))
    started = time.monotonic()
    code, lines, _, err = schemas(capsys, "--json", "--mcp", server, "--mcp-timeout", "2")
    assert code == 2 and lines == [] and "Traceback" not in err
    assert err.strip() == f"xpeval: MCP server {server}: {why}", "one line, the SDK's own log kept out"
    assert time.monotonic() - started < 15, "the timeout bounds the wait"


def test_a_command_that_does_not_exist_and_a_closed_port_are_input_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, _, err = schemas(capsys, "--json", "--mcp", "xpeval-no-such-server --stdio")
    assert code == 2
    assert err.strip() == (
        "xpeval: MCP server xpeval-no-such-server --stdio: cannot start the command "
        "(No such file or directory: 'xpeval-no-such-server')"
    )
    code, _, _, err = schemas(capsys, "--json", "--mcp", "http://127.0.0.1:9/mcp", "--mcp-timeout", "5")
    assert code == 2 and err.startswith("xpeval: MCP server http://127.0.0.1:9/mcp: cannot connect")


def test_credentials_in_a_server_command_or_url_stay_out_of_rows_and_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, _, err = schemas(
        capsys, "--json", "--mcp", "env GITHUB_TOKEN=ghp_notarealtoken1234567890 xpeval-no-such-server"
    )
    assert code == 2 and "ghp_notarealtoken" not in err and "GITHUB_TOKEN=<scrubbed>" in err
    code, _, _, err = schemas(
        capsys, "--json", "--mcp", "http://user:hunter2hunter2@127.0.0.1:9/mcp?token=abc123456789"
    )
    assert code == 2 and "hunter2" not in err and "abc123456789" not in err


def test_an_answer_deeper_than_the_sdk_parses_is_named_as_such_not_as_not_json_rpc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = command(script(tmp_path, "deep_server.py", DEEP_SERVER))
    code, lines, _, err = schemas(capsys, "--json", "--mcp", server, "--mcp-timeout", "3")
    assert code == 2 and lines == []
    assert "nested deeper than the MCP SDK's JSON parser reads" in err
    assert "not JSON-RPC" not in err
