"""A wire from another package (issue 20, "Any provider's wire"): registered through
`xpeval.plugin` only, it is listed, passes the conformance suite, decodes real recordings, is
judged by `xpeval schemas` with its own acceptance rules, and records through the emulator; a
wire that is wrong in any way is refused with one line naming what to fix.

The plugin is `examples/ollama-xpeval` (Ollama's native `/api/chat`), installed as a
distribution is (its module and a dist-info on the path), and xpeval runs in fresh interpreters,
since plugins are imported once per process. The in-process tests register and unregister
their own wires."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import REPO_ROOT, corpus_files
from xpeval import plugin
from xpeval.adapters.registry import (
    create_adapter,
    factory_of,
    get_entry,
    unregister_adapter,
)
from xpeval.adapters.schema import apply_dialect, prepare_tools
from xpeval.adapters.wires import get_wire, wire_for_path, wire_names
from xpeval.errors import AdapterFactoryError
from xpeval.evals.acceptance.checker import check, mode_for

EXAMPLE = REPO_ROOT / "examples" / "ollama-xpeval"
ENTRY_POINTS = (
    "[xpeval.wires]\nollama-chat = ollama_xpeval:OLLAMA_WIRE\n\n"
    "[xpeval.adapters]\nollama = ollama_xpeval:OLLAMA\n"
)
TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {"name": "listy", "description": "A list at the root.", "parameters": {"type": "array", "items": {}}},
]


def install(
    site: Path, *, entry_points: str = ENTRY_POINTS, name: str = "ollama-xpeval", extra: str = ""
) -> None:
    """The example plugin as an installed distribution in `site` (with `extra` appended to its module)."""
    site.mkdir(parents=True, exist_ok=True)
    module = name.replace("-", "_")
    source = (EXAMPLE / "ollama_xpeval.py").read_text()
    (site / f"{module}.py").write_text(source + extra)
    dist = site / f"{module}-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(entry_points.replace("ollama_xpeval:", f"{module}:"))


def environment(*sites: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XPEVAL_CASSETTE_MODE"}
    env["PYTHONPATH"] = os.pathsep.join([*(str(s) for s in sites), str(REPO_ROOT)])
    return env


def xpeval(
    env: dict[str, str], cwd: Path, *args: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xpeval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A project whose `[tool.xpeval] adapters` names the plugin's adapter, with the plugin installed."""
    install(tmp_path / "site")
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "host"\n\n[tool.xpeval]\nadapters = ["ollama"]\n')
    (root / "tools.json").write_text(json.dumps(TOOLS))
    return root, environment(tmp_path / "site")


@pytest.mark.slow
def test_a_plugin_wire_is_listed_decodes_records_replays_and_is_judged_by_its_own_rules(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    listed = xpeval(env, root, "adapters", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert {k: rows["ollama"][k] for k in ("kind", "wire", "distribution")} == {
        "kind": "direct",
        "wire": "ollama-chat",
        "distribution": "ollama-xpeval",
    }
    recorded = xpeval(
        env,
        root,
        "run",
        "--mode",
        "record",
        "--target",
        "emulator",
        "--categories",
        "simple",
        "--no-progress",
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassettes = sorted((root / "cassettes" / "ollama").glob("*/*.yaml"))
    assert len(cassettes) == 23
    replayed = xpeval(env, root, "run", "--categories", "simple", "--no-progress", "--no-baseline")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "ollama: replay cassettes (qwen3:0.6b: 23 emulated)" in replayed.stderr
    decoded = xpeval(env, root, "decode", str(cassettes[0]))  # the wire told by the URL
    assert decoded.returncode == 0 and "Traceback" not in decoded.stderr, decoded.stderr
    judged = xpeval(
        env, root, "schemas", "--tools", "tools.json", "--json", "--no-fidelity", "--workers", "1"
    )
    assert judged.returncode == 0, judged.stderr
    verdicts = {row["tool"]: row for row in map(json.loads, judged.stdout.splitlines())}
    assert verdicts["get_weather"]["verdict"] == "as-is" and verdicts["get_weather"]["violations"] == []
    assert verdicts["listy"]["verdict"] == "refused"  # the dialect refuses a non-object root


@pytest.mark.slow
def test_pytest_conformance_runs_the_whole_suite_for_the_plugin_wire(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--xpeval-conformance", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed is not None and int(passed.group(1)) >= 25, done.stdout[-500:]


OLLAMA_CORPUS = corpus_files("new-wires/ollama-chat/*")
EXPECTED_OLLAMA = {
    "openinference__test_chat_error_records_model_name.yaml": (404, [], None, None),
    "openinference__test_chat_stream.yaml": (200, [], "1\n2\n3\n4\n5", "stop"),
    "openinference__test_chat_with_callable_tool.yaml": (
        200,
        [{"id": "call_2k7ryu9k", "name": "add_two_numbers", "arguments": {"a": 2, "b": 3}}],
        None,
        "stop",
    ),
}


DECODE_EACH = """
import contextlib, io, json, sys
from xpeval.evals.cli import main
for path in sys.argv[1:]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["decode", path, "--wire", "ollama-chat", "--json"])
    print(json.dumps({"code": code, "stdout": printed.getvalue()}))
"""
"""`xpeval decode FILE --wire ollama-chat --json` of every file named, in one fresh interpreter
(the plugin's entry point loaded once, as in any command): a result line per file."""


@pytest.mark.skipif(not OLLAMA_CORPUS, reason="the shared corpus (../shared/corpus) is absent")
def test_every_ollama_recording_decodes_through_the_plugin_wire(tmp_path: Path) -> None:
    install(tmp_path / "site")
    env = environment(tmp_path / "site")
    ran = subprocess.run(
        [sys.executable, "-c", DECODE_EACH, *map(str, OLLAMA_CORPUS)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    decoded = [json.loads(line) for line in ran.stdout.splitlines()]
    assert len(decoded) == len(OLLAMA_CORPUS), ran.stdout
    for path, done in zip(OLLAMA_CORPUS, decoded, strict=True):
        assert done["code"] == 0, (path.name, ran.stderr)
        (row,) = [json.loads(line) for line in done["stdout"].splitlines()]
        assert "decode_error" not in row, (path.name, row)
        if path.name in EXPECTED_OLLAMA:
            status, calls, text, finish = EXPECTED_OLLAMA[path.name]
            assert (row["status"], row["tool_calls"], row["text"], row["finish_reason"]) == (
                status,
                calls,
                text,
                finish,
            )
        else:
            assert row["status"] == 200 and row["text"] and row["finish_reason"] == "stop", (path.name, row)


def test_two_distributions_offering_one_wire_are_both_refused_and_its_adapter_with_them(
    tmp_path: Path,
) -> None:
    install(tmp_path / "a", name="ollama-a")
    install(
        tmp_path / "b",
        name="ollama-b",
        entry_points="[xpeval.wires]\nollama-chat = ollama_xpeval:OLLAMA_WIRE\n",
    )
    env = environment(tmp_path / "a", tmp_path / "b")
    listed = xpeval(env, tmp_path, "adapters", "--json")
    assert listed.returncode == 0 and "ollama" not in listed.stdout
    lines = [line for line in listed.stderr.splitlines() if "ollama-chat" in line]
    assert any(
        "ollama-a and ollama-b" in line and "each offers the id ollama-chat" in line for line in lines
    ), lines
    assert any(
        "names an unknown wire: ollama-chat (plugin ollama-chat of ollama-a and ollama-b refused" in line
        for line in lines
    ), lines


@pytest.mark.parametrize(
    ("entry_points", "extra", "why"),
    [
        ("[xpeval.wires]\nollama = ollama_xpeval:OLLAMA_WIRE\n", "", "its codec's name is 'ollama-chat'"),
        (
            "[xpeval.wires]\nollama-chat = ollama_xpeval:OLLAMA\n",
            "",
            "must be a WirePlugin, not a DirectEntry",
        ),
        (
            "[xpeval.wires]\nollama-chat = ollama_xpeval:OLLAMA_WIRE\n",
            "\nfrom xpeval.plugin import register_wire\nregister_wire(OLLAMA_WIRE)\n",
            "registered wire ollama-chat, dialect ollama while loading, outside its entry point",
        ),
        (
            "[xpeval.wires]\nopenai-chat = ollama_xpeval:OLLAMA_WIRE\n",
            "",
            "openai-chat is one of xpeval's own",
        ),
    ],
    ids=["misnamed", "not-a-wire", "registers-itself", "built-in-name"],
)
def test_a_wrong_wire_entry_point_is_refused_with_one_line(
    tmp_path: Path, entry_points: str, extra: str, why: str
) -> None:
    install(tmp_path / "site", entry_points=entry_points, extra=extra)
    done = xpeval(environment(tmp_path / "site"), tmp_path, "adapters", "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "ollama-chat" not in [row["wire"] for row in json.loads(done.stdout)]
    (line,) = [line for line in done.stderr.splitlines() if "refused" in line]
    assert why in line, line


# --------------------------------------------------------------------------- in-process


def _module() -> Any:
    """The example plugin's module, imported from its folder (it imports `xpeval.plugin` only)."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        import ollama_xpeval

        return ollama_xpeval
    finally:
        sys.path.remove(str(EXAMPLE))


def _renamed(wire: str, dialect: str) -> plugin.WirePlugin:
    """The example's wire under other names (its own are the installed plugin's)."""
    example = _module()
    codec = example.OllamaChat()
    codec.name = wire
    codec.request_paths = (re.compile(rf"/{wire}/api/chat"),)
    return plugin.WirePlugin(
        codec=codec,
        dialects=(dataclasses.replace(example.OLLAMA_WIRE.dialects[0], name=dialect),),
        acceptance=(dataclasses.replace(example.OLLAMA_WIRE.acceptance[0], name=wire, dialect=dialect),),
    )


@pytest.fixture
def registered() -> Iterator[plugin.WirePlugin]:
    wire = _renamed("test-wire", "test-dialect")
    plugin.register_wire(wire)
    try:
        yield wire
    finally:
        plugin.unregister_wire("test-wire")


def test_a_wire_registered_in_process_is_a_wire_of_every_part_of_xpeval(
    registered: plugin.WirePlugin,
) -> None:
    assert "test-wire" in wire_names() and get_wire("test-wire") is registered.codec
    assert wire_for_path("http://localhost:11434/test-wire/api/chat") is registered.codec
    assert apply_dialect("test-dialect", {"type": "object"}).refusal is None
    assert prepare_tools("test-dialect", []).dialect == "test-dialect"
    assert mode_for("test-wire", "test-dialect", None) == "test-wire"
    definition = {"type": "function", "function": {"name": "a.b", "parameters": {"type": "array"}}}
    assert {v.rule for v in check("test-wire", definition)} == {
        "ollama.name-pattern",
        "ollama.root-type-object",
    }
    entry = dataclasses.replace(_module().OLLAMA, wire="test-wire", schema_dialect="test-dialect")
    plugin.register_adapter("test-adapter", entry)
    try:
        adapter = create_adapter("test-adapter")
        assert adapter.wire is registered.codec and adapter.dialect == "test-dialect"
    finally:
        unregister_adapter("test-adapter")


def test_the_same_wire_twice_is_refused_and_a_built_in_one_cannot_be_removed(
    registered: plugin.WirePlugin,
) -> None:
    with pytest.raises(
        plugin.WireError, match=r"^wire test-wire is already registered \(by \(registered in-process\)\)$"
    ):
        plugin.register_wire(_renamed("test-wire", "other-dialect"))
    with pytest.raises(plugin.WireError, match="built in"):
        plugin.unregister_wire("openai-chat")


class _NoRender:
    name = "half-wire"
    request_paths = (re.compile("/half"),)

    async def send(self, client: Any, kwargs: Any) -> None: ...


_NOT_RULES: Any = None


def _invalid() -> list[tuple[object, str]]:
    good = _renamed("bad-wire", "bad-dialect")
    mode = good.acceptance[0]
    raising = _module().OllamaChat()
    raising.name = "bad-wire"
    raising.tool_layout = lambda dialect, strict: 1 / 0
    return [
        ("a codec", "a wire plugin must be a WirePlugin, not a str"),
        (plugin.WirePlugin(codec=_NoRender()), "wire half-wire: its codec lacks encode, tool_layout"),  # type: ignore[arg-type]
        (dataclasses.replace(good, codec=_renamed("Bad Wire", "x").codec), "invalid wire name 'Bad Wire'"),
        (
            dataclasses.replace(good, codec=_renamed("anthropic", "x").codec),
            "wire anthropic is one of xpeval's own",
        ),
        (
            dataclasses.replace(good, acceptance=(dataclasses.replace(mode, name="openai-chat"),)),
            "must be named 'bad-wire'",
        ),
        (
            _renamed("gemini-parameters", "bad-dialect"),
            "acceptance mode gemini-parameters is wire google-genai's",
        ),
        (
            dataclasses.replace(good, acceptance=(dataclasses.replace(mode, dialect="nope"),)),
            "unknown dialect: nope",
        ),
        (
            dataclasses.replace(good, acceptance=(dataclasses.replace(mode, profile=object()),)),
            "is not a Profile",
        ),
        (
            dataclasses.replace(good, acceptance=(dataclasses.replace(mode, max_tools=3),)),
            "max_tools (a positive int) and max_tools_rule go together",
        ),
        (dataclasses.replace(good, codec=raising), "tool_layout raised ZeroDivisionError"),
        (
            dataclasses.replace(good, dialects=(dataclasses.replace(good.dialects[0], name="openai"),)),
            "dialect openai is already registered",
        ),
        (
            dataclasses.replace(good, dialects=(dataclasses.replace(good.dialects[0], rules=_NOT_RULES),)),
            "rules must be a SchemaRules instance",
        ),
    ]


@pytest.mark.parametrize(
    ("candidate", "why"), _invalid(), ids=lambda v: v.split(":")[0][:40] if isinstance(v, str) else None
)
def test_an_invalid_wire_is_refused_with_one_line_and_nothing_of_it_registered(
    candidate: object, why: str
) -> None:
    before = (wire_names(), plugin.wire_names())
    with pytest.raises(plugin.WireError) as refused:
        plugin.register_wire(candidate)  # type: ignore[arg-type]
    message = str(refused.value)
    assert why in message and "\n" not in message, message
    assert (wire_names(), plugin.wire_names()) == before
    assert apply_dialect("bad-dialect", {"type": "object"}).refusal == "unknown schema dialect: 'bad-dialect'"


def test_a_wrapper_stating_another_wire_than_its_parents_is_refused() -> None:
    entry = dataclasses.replace(get_entry("openai-compatible"), wire="anthropic-messages")
    with pytest.raises(
        plugin.RegistryError,
        match="speaks the anthropic-messages wire but its contract parent openai-chat speaks openai-chat",
    ):
        plugin.register_adapter("sly", entry)


def test_a_factory_building_an_adapter_of_another_wire_is_refused() -> None:
    openai_compatible = get_entry("openai-compatible")
    parents_factory = factory_of("openai-compatible")
    assert parents_factory is not None

    def sly(
        contract: plugin.EffectiveContract, provider: plugin.Provider, settings: plugin.AdapterSettings
    ) -> plugin.Adapter:
        return parents_factory(dataclasses.replace(contract, wire="anthropic-messages"), provider, settings)

    plugin.register_adapter("sly", dataclasses.replace(openai_compatible, factory=sly))
    try:
        with pytest.raises(AdapterFactoryError, match="speaking anthropic-messages under another contract"):
            create_adapter("sly")
    finally:
        unregister_adapter("sly")


def test_the_plugin_api_is_versioned_and_every_name_resolves() -> None:
    assert plugin.PLUGIN_API_VERSION[0] == 1
    assert plugin.__all__ == sorted(set(plugin.__all__))
    for name in plugin.__all__:
        assert getattr(plugin, name) is not None
