"""A plugin that replaces or wraps what xpeval ships is refused, and what it changed put back.

The plugin watch compares what each wire and dialect IS (its `WirePlugin`, its codec's class and
functions, its module's helpers, the dialect's pass and name rule), not only which names exist
(`adapters/wires/catalog.py`, `WireWatch`; docs/plugins.md). Each test installs a distribution
whose import does the tampering and drives the real `xpeval` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT

WRAP_DECODE = """
from xpeval.bundled import mistral_chat
from xpeval.plugin import TurnResult
_decode = mistral_chat.MistralChat.decode
def decode(self, response):  # every call dropped: Mistral would score as "no call"
    result = _decode(self, response)
    return TurnResult(text=result.text, finish_reason=result.finish_reason, usage=result.usage)
mistral_chat.MistralChat.decode = decode
"""
REPLACE_ENTRY = """
import dataclasses
from xpeval.adapters.wires import catalog
from xpeval.plugin import TurnResult
bundled = catalog._WIRES["mistral-chat"]
class Quiet(type(bundled.codec)):
    def decode(self, response):
        return TurnResult(text="", finish_reason="stop")
catalog._WIRES["mistral-chat"] = dataclasses.replace(bundled, codec=Quiet())
"""
SHADOW_INSTANCE = """
from xpeval.bundled import mistral_chat
codec = mistral_chat.MISTRAL_WIRE.codec
codec.send = lambda client, kwargs: None
"""
REPLACE_DIALECT = """
from xpeval.adapters.schema import apply
from xpeval.plugin import SchemaRules
apply.RULES["mistral"] = SchemaRules()
"""
WRAP_BUILTIN = """
from xpeval.adapters.wires import openai_chat
_decode = openai_chat.OpenAIChatWire.decode
openai_chat.OpenAIChatWire.decode = lambda self, response: _decode(self, response)
"""
HARMLESS = "\nfrom xpeval.bundled import mistral_chat  # reads, changes nothing\n"


def install(site: Path, source: str, group: str = "xpeval.wires") -> None:
    """A distribution `sly-plugin` whose module runs `source` at import; its entry point names
    a wire (or an adapter) it never gets to register."""
    site.mkdir(parents=True)
    (site / "sly_plugin.py").write_text(source + "\nTHING = None\n")
    dist = site / "sly_plugin-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sly-plugin\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\nsly = sly_plugin:THING\n")


def xpeval(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "XPEVAL_CASSETTE_MODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO_ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "xpeval", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def refusals(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "sly-plugin refused" in line]


def mistral_replay(
    site: Path, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, object]]]:
    """The committed Mistral cassettes of the `simple` cases replayed through `xpeval run`."""
    results = tmp_path / "results.jsonl"
    done = xpeval(
        site,
        REPO_ROOT,
        "run",
        "--adapters",
        "mistral",
        "--categories",
        "simple",
        "--no-progress",
        "--no-baseline",
        "--results",
        str(results),
        "--reports",
        str(tmp_path / "reports"),
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    return done, [row for row in rows if row.get("final") and "case_id" in row]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "group", "named"),
    [
        (WRAP_DECODE, "xpeval.wires", "wire mistral-chat (MistralChat.decode)"),
        (REPLACE_ENTRY, "xpeval.adapters", "wire mistral-chat (its WirePlugin)"),
        (SHADOW_INSTANCE, "xpeval.wires", "wire mistral-chat (MistralChat.send)"),
        (REPLACE_DIALECT, "xpeval.wires", "dialect mistral (its table entry)"),
    ],
    ids=["wraps-the-codec", "replaces-the-entry", "shadows-a-method", "replaces-the-dialect"],
)
def test_a_plugin_that_replaces_or_wraps_the_bundled_mistral_wire_is_refused_and_mistral_still_scores(
    tmp_path: Path, source: str, group: str, named: str
) -> None:
    install(tmp_path / "site", source, group)
    done, rows = mistral_replay(tmp_path / "site", tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (line,) = refusals(done.stderr)
    assert (
        f"plugin sly = sly_plugin:THING of sly-plugin refused: replaced or wrapped xpeval's {named}" in line
    )
    assert "put back as xpeval ships it" in line
    assert len(rows) == 23 and all(row["correct"] for row in rows), [
        (row["case_id"], row["reason"]) for row in rows if not row["correct"]
    ]


def test_a_plugin_wrapping_a_built_in_wire_it_imports_first_is_refused(tmp_path: Path) -> None:
    install(tmp_path / "site", WRAP_BUILTIN)
    done = xpeval(tmp_path / "site", tmp_path, "adapters", "--json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (line,) = refusals(done.stderr)
    assert "replaced or wrapped xpeval's wire openai-chat (OpenAIChatWire.decode)" in line


def test_a_plugin_that_only_reads_a_bundled_wire_is_let_in(tmp_path: Path) -> None:
    install(tmp_path / "site", HARMLESS)
    done = xpeval(tmp_path / "site", tmp_path, "adapters", "--json")
    assert done.returncode == 0, done.stderr
    (line,) = refusals(done.stderr)  # refused only for what its entry point names
    assert "must be a WirePlugin, not a NoneType" in line, line


CLAIMS_EVERY_CHOICE = """
import dataclasses as _dc
from xpeval.plugin import Capabilities as _Caps, ForceTool as _Force
_encode = OllamaChat.encode
def _encode_named_only(self, request, tools):
    kwargs = _encode(self, request, tools)
    if isinstance(request.tool_choice, _Force):  # only the named mode reaches the request
        kwargs["options"] = {**kwargs.get("options", {}), "forced": request.tool_choice.name}
    return kwargs
OllamaChat.encode = _encode_named_only
OLLAMA = _dc.replace(OLLAMA, capabilities=_Caps(tool_choice=frozenset({"auto", "none", "required", "named"})))
"""


@pytest.mark.slow
def test_conformance_exercises_every_declared_tool_choice_of_a_plugin_not_only_the_named_one(
    tmp_path: Path,
) -> None:
    from tests.adapters.test_plugin_wires import environment
    from tests.adapters.test_plugin_wires import install as install_example

    install_example(tmp_path / "site", extra=CLAIMS_EVERY_CHOICE)
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "host"\n\n[tool.xpeval]\nadapters = ["ollama"]\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--xpeval-conformance",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "tool_choice",
        ],
        cwd=root,
        env=environment(tmp_path / "site"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 1, done.stdout[-3000:]
    (failed,) = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    assert "test_every_declared_tool_choice_reaches_the_wire_as_a_request_of_its_own[ollama]" in failed
    assert "sends the same request for auto and none, auto and required, none and required" in done.stdout
