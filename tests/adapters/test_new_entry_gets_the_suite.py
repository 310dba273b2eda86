"""An adapter of another package: one entry point, and xpeval and its conformance suite know it.

A `deepseek` wrapper of openai-chat lives in its own package (a module and its dist-info, put
on the path as an installed distribution is), registered through the `xpeval.adapters` entry
point. It shows in `xpeval adapters --json`, records and replays in `xpeval run`, and
`pytest --xpeval-conformance` in the package's own folder runs exactly its parent's checks for
it. A broken entry point fails closed, naming the id and why.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT

PLUGIN = textwrap.dedent('''
    """DeepSeek for xpeval: the openai-chat contract at its own base URL and key."""

    from xpeval.adapters.adapter import Capabilities
    from xpeval.adapters.providers import openai
    from xpeval.adapters import Provider
    from xpeval.adapters.registry import WrapperEntry

    DEEPSEEK = WrapperEntry(
        contract_parent="openai-chat",
        provider=Provider(
            name="deepseek",
            default_model="deepseek-chat",
            key_vars=("DEEPSEEK_API_KEY",),
            base_url_var="DEEPSEEK_BASE_URL",
            default_base_url="https://api.deepseek.com/v1",
        ),
        factory=openai.create,
        description="DeepSeek (OpenAI Chat wire)",
        # thinking mode returns reasoning_content and requires it back before a tool turn
        capabilities=Capabilities(reasoning_state=frozenset({"reasoning_content"})),
    )
    BROKEN = WrapperEntry(contract_parent="ghost", provider=DEEPSEEK.provider, factory=openai.create)
    PLUGIN = "not an entry"
    OVERCLAIMED = WrapperEntry(
        contract_parent="openai-chat",
        provider=DEEPSEEK.provider,
        factory=openai.create,
        capabilities=Capabilities(strict_schemas=True, parallel_calls=False),
    )
''')


def install(folder: Path, entries: dict[str, str]) -> dict[str, str]:
    """Write the package and its distribution metadata; the environment that sees it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "deepseek_xpeval.py").write_text(PLUGIN)
    dist = folder / "deepseek_xpeval-0.1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: deepseek-xpeval\nVersion: 0.1.0\n")
    lines = "".join(f"{name} = deepseek_xpeval:{target}\n" for name, target in entries.items())
    (dist / "entry_points.txt").write_text(f"[xpeval.adapters]\n{lines}")
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "deepseek-xpeval"\n\n[tool.xpeval]\nadapters = ["deepseek"]\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "XPEVAL_CASSETTE_MODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(REPO_ROOT)])
    return env


def xpeval(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter: the plugin is an entry point on its PYTHONPATH, and plugins are
    imported once per process (this one has loaded its own)."""
    return subprocess.run(
        [sys.executable, "-m", "xpeval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def count(output: str, word: str) -> int:
    match = re.search(rf"(\d+) {word}", output)
    return int(match.group(1)) if match else 0


@pytest.mark.slow
def test_a_plugin_adapter_is_listed_and_runs_recorded_and_replayed(tmp_path: Path) -> None:
    package = tmp_path / "deepseek-xpeval"
    env = install(package, {"deepseek": "DEEPSEEK"})
    listed = json.loads(xpeval(env, package, "adapters", "--json").stdout)
    assert {"id": "deepseek", "kind": "wrapper", "wire": "openai-chat", "contract_parent": "openai-chat"} in [
        {k: row[k] for k in ("id", "kind", "wire", "contract_parent")} for row in listed
    ]
    recorded = xpeval(
        env,
        package,
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
    assert (package / "cassettes" / "deepseek" / "deepseek-chat").is_dir(), "cassettes at the project root"
    # A project's first recording is followed by its baseline, as the recording's hint says.
    written = xpeval(env, package, "gate", "--update-baseline")
    assert written.returncode == 0, written.stdout + written.stderr
    assert (package / "reports" / "baseline.json").is_file()
    # From a subfolder: the project's paths still apply.
    replayed = xpeval(env, package / "reports", "run", "--categories", "simple", "--no-progress")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "deepseek: replay cassettes (deepseek-chat: 23 emulated)" in replayed.stderr


def conformance(
    package: Path, env: dict[str, str], *args: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`pytest --xpeval-conformance` run in the plugin package's own folder, as its author would."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--xpeval-conformance", "-q", "-p", "no:cacheprovider", *args],
        cwd=package,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_pytest_conformance_in_the_plugins_folder_runs_its_parents_checks(tmp_path: Path) -> None:
    package = tmp_path / "deepseek-xpeval"
    env = install(package, {"deepseek": "DEEPSEEK"})
    done = conformance(package, env, "-k", "deepseek", timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # The package's [tool.xpeval] adapters scopes its conformance run to deepseek; the parent's
    # checks are collected by naming the parent explicitly.
    parent = conformance(package, env, "--collect-only", "--xpeval-adapters", "openai-chat", timeout=300)
    checks = [line for line in parent.stdout.splitlines() if "openai-chat" in line and "::" in line]
    ran = count(done.stdout, "passed") + count(done.stdout, "skipped")
    assert ran == len(checks) > 30, (ran, len(checks))
    # The reasoning family runs for it (it declares reasoning_content; its parent declares none).
    family = conformance(package, env, "-k", "deepseek and reasoning_state", "-rA", timeout=600)
    assert family.returncode == 0 and "PASSED" in family.stdout, family.stdout[-3000:]


@pytest.mark.parametrize(
    ("target", "why"),
    [("BROKEN", "Unknown adapter: ghost"), ("NOPE", "cannot load"), ("PLUGIN", "not a DirectEntry")],
)
def test_a_broken_entry_point_fails_closed_naming_the_adapter(tmp_path: Path, target: str, why: str) -> None:
    package = tmp_path / "p"
    env = install(package, {"deepseek": target})
    listed = xpeval(env, package, "adapters", "--json")
    assert listed.returncode == 0 and "deepseek" not in listed.stdout
    used = xpeval(env, package, "run", "--adapters", "deepseek", "--no-progress")
    assert used.returncode == 2 and "Traceback" not in used.stderr
    assert "Unknown adapter: deepseek" in used.stderr and why in used.stderr


@pytest.mark.slow
def test_a_wrongly_declared_capability_fails_conformance(tmp_path: Path) -> None:
    package = tmp_path / "p"
    env = install(package, {"overclaimed": "OVERCLAIMED"})
    done = conformance(
        package, env, "--xpeval-adapters", "overclaimed", "-k", "overclaimed and capabilities", timeout=600
    )
    assert done.returncode == 1, done.stdout[-3000:]
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    assert any("test_strict_schemas_are_sent_exactly_when_declared" in line for line in failed)
    assert any("test_declared_parallel_and_streamed_calls_decode_whole" in line for line in failed)
    assert "declares strict_schemas=True but does not send strict tools" in done.stdout
