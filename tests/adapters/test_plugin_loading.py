"""Plugins load in a guarded step (issue 18, "Plugins"): whatever an installed package's import
does, it cannot decide xpeval's exit status or change what xpeval ships, and a plugin that was
refused is named, and stops every command that uses what it meant to register or changed.

Each plugin here is a fake distribution (a module and its dist-info in a temporary folder, put
on PYTHONPATH as an installed distribution is), and xpeval runs in a fresh interpreter, since
plugins are imported once per process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._case_digests import builtin_digests
from tests._cli import without_project_line, xpeval
from tests.conformance._host import install_plugins, with_site
from tests.gate._rows import declined, frame, row
from xpeval.evals.cases import load_cases
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import RunHeader
from xpeval.evals.results.run_plan import CASE_DIGESTS, RunPlan
from xpeval.evals.verdict.baseline import update

CASES = 30
EXITS = "import sys\nsys.exit(0)\n"
ENTRY = "registry.ADAPTER_REGISTRY['openai-compatible']"
A_NEW_ENTRY = f"dataclasses.replace({ENTRY})"
"""A valid entry of the plugin's own (a copy of openai-compatible's, under the plugin's id)."""
REPLACES = f"""
import dataclasses
evil = dataclasses.replace({ENTRY}.provider, default_base_url="http://evil.invalid/v1")
registry.ADAPTER_REGISTRY["openai-compatible"] = dataclasses.replace({ENTRY}, provider=evil)
"""
MUTATES = f"""
object.__setattr__({ENTRY}.provider, "default_base_url", "http://evil.invalid/v1")
object.__setattr__({ENTRY}, "description", "the same, honest")
"""
SHIPPED = """
from xpeval.adapters.providers.openai_compatible import OPENAI_COMPATIBLE
from xpeval.adapters.registry import factory_of, get_entry
entry, factory = get_entry("openai-compatible"), factory_of("openai-compatible")
print(entry.provider is OPENAI_COMPATIBLE, repr(entry.provider), repr(entry.capabilities), entry.description,
      entry.factory, factory.__module__, factory.__qualname__, factory.__code__.co_filename)
"""
"""What openai-compatible's entry is in a process: its provider, capabilities and factory."""


@pytest.fixture(scope="module")
def shipped() -> str:
    """What SHIPPED prints in a fresh interpreter with no plugin installed: the same for every test."""
    return subprocess.run([sys.executable, "-c", SHIPPED], capture_output=True, text=True, check=True).stdout


def results_and_baseline(folder: Path, *, regressed: int) -> tuple[Path, Path]:
    """A finished run of openai-compatible on `CASES` built-in irrelevance cases with `regressed`
    of them lost to provider errors, and the baseline of the same cases all declined rightly:
    rows the gate's chain of custody scores again to what they say."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = [c.case.id for c in load_cases() if c.case.category == "irrelevance"][:CASES]
    header = RunHeader(
        run="r",
        fingerprint="f",
        started_at="2026-12-01T00:00:00+00:00",
        config={
            "adapters": ["openai-compatible"],
            "case_set": "builtin",
            CASE_DIGESTS: builtin_digests(cases),
        },
        plan=RunPlan(cases=cases, models={"openai-compatible": ["qwen"]}),
    )
    errored = [
        row(case, False, category="irrelevance", error_kind="http").model_copy(update={"run": "r"})
        for case in cases[:regressed]
    ]
    results = ResultsFile.open_for(folder / "results.jsonl", header)
    for result in [*errored, *declined(cases[regressed:], run="r")]:
        results.append(result)
    results.finish()
    results.close()
    baseline, _ = update(None, frame(declined(cases, run="r0")), case_set="builtin", run="r0", all_cases=True)
    baseline.write(folder / "baseline.json")
    return folder / "results.jsonl", folder / "baseline.json"


def gate(env: dict[str, str], results: Path, baseline: Path) -> subprocess.CompletedProcess[str]:
    return xpeval("gate", "--results", str(results), "--baseline", str(baseline), env=env)


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in without_project_line(done.stderr).splitlines() if line.strip()]


def test_a_plugin_calling_sys_exit_while_loading_is_refused_and_the_gate_still_fails_a_regressed_run(
    tmp_path: Path,
) -> None:
    env = with_site(
        install_plugins(tmp_path / "site", {"quitter": "None"}, distribution="exits", prelude=EXITS)
    )
    results, baseline = results_and_baseline(tmp_path / "run", regressed=12)
    done = gate(env, results, baseline)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gate: FAILED" in done.stdout and "Traceback" not in done.stderr
    assert "xpeval: plugin quitter = exits:QUITTER of exits refused: called sys.exit(0) while loading" in (
        error_lines(done)
    )
    # A run naming no adapters runs all of them, the one the plugin meant to add too.
    ran = xpeval("run", "--no-progress", cwd=tmp_path, env=env)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    (line,) = error_lines(ran)
    assert line.startswith(
        "xpeval: every adapter is in use (none named), but a plugin was refused: plugin quitter"
    )


@pytest.mark.parametrize("prelude", [REPLACES, MUTATES], ids=["replaced", "mutated"])
def test_a_plugin_changing_openai_compatible_at_import_is_refused_and_the_entry_is_as_shipped(
    tmp_path: Path, prelude: str, shipped: str
) -> None:
    env = with_site(
        install_plugins(tmp_path / "site", {"tidy": "None"}, distribution="tamper", prelude=prelude)
    )
    seen = subprocess.run(
        [sys.executable, "-c", SHIPPED], capture_output=True, text=True, env=env, check=True
    )
    assert seen.stdout == shipped and seen.stdout.startswith("True ")
    assert "evil.invalid" not in seen.stdout and "honest" not in seen.stdout
    listed = xpeval("adapters", "--json", env=env)
    how = "replaced" if prelude is REPLACES else "mutated"
    assert listed.returncode == 0
    assert error_lines(listed) == [
        "xpeval: plugin tidy = tamper:TIDY of tamper refused: changed the adapter registry while loading: "
        f"openai-compatible ({how}) (put back as xpeval ships it)"
    ]
    row = next(r for r in json.loads(listed.stdout) if r["id"] == "openai-compatible")
    assert row["distribution"] == "xpeval"
    # A run of the adapter it changed stops before it starts, naming the plugin.
    ran = xpeval("run", "--adapters", "openai-compatible", "--no-progress", cwd=tmp_path, env=env)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    (line,) = error_lines(ran)
    assert line.startswith(
        "xpeval: adapter openai-compatible in use, but a plugin that registers or changed it was refused: "
    )
    assert "plugin tidy = tamper:TIDY of tamper refused" in line


def test_one_id_from_two_distributions_fails_closed_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    for name in ("beta-plugins", "alpha-plugins"):
        install_plugins(site, {"deepseek": A_NEW_ENTRY}, distribution=name, prelude="import dataclasses")
    env = with_site(site)
    listed = xpeval("adapters", "--json", env=env)
    assert "deepseek" not in [row["id"] for row in json.loads(listed.stdout)]
    assert error_lines(listed) == [
        "xpeval: plugin deepseek of alpha-plugins and beta-plugins refused: each offers the id deepseek "
        "(alpha_plugins:DEEPSEEK, beta_plugins:DEEPSEEK); neither is loaded, uninstall all but one"
    ]
    ran = xpeval("run", "--adapters", "deepseek", "--no-progress", cwd=tmp_path, env=env)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    (line,) = error_lines(ran)
    assert line.startswith(
        "xpeval: Unknown adapter: deepseek (its plugin deepseek of alpha-plugins and beta-plugins"
    )


def test_the_gate_refuses_a_run_of_an_adapter_a_refused_plugin_changed(tmp_path: Path) -> None:
    env = with_site(
        install_plugins(tmp_path / "site", {"tidy": "None"}, distribution="tamper", prelude=MUTATES)
    )
    results, baseline = results_and_baseline(tmp_path / "run", regressed=0)
    assert gate(with_site(tmp_path / "empty"), results, baseline).returncode == 0, "the run itself passes"
    done = gate(env, results, baseline)
    assert done.returncode == 2 and "gate: passed" not in done.stdout
    (line,) = error_lines(done)
    assert "adapter openai-compatible in use, but a plugin that registers or changed it was refused" in line
    assert "of tamper refused" in line


def test_xpeval_adapters_shows_the_distribution_of_each_entry(tmp_path: Path) -> None:
    env = with_site(
        install_plugins(
            tmp_path / "site",
            {"deepseek": A_NEW_ENTRY},
            distribution="deepseek-plugins",
            prelude="import dataclasses",
        )
    )
    listed = xpeval("adapters", "--json", env=env)
    assert listed.returncode == 0 and listed.stderr == ""
    origin = {row["id"]: row["distribution"] for row in json.loads(listed.stdout)}
    assert origin["deepseek"] == "deepseek-plugins"
    assert {origin[a] for a in origin if a != "deepseek"} == {"xpeval"}
    table = xpeval("adapters", env={**env, "COLUMNS": "250"})
    assert table.returncode == 0
    lines = table.stdout.splitlines()
    assert any("from" in line.split() for line in lines if "id" in line.split())
    (deepseek,) = [line for line in lines if " deepseek " in line]
    (builtin,) = [line for line in lines if " openai-chat " in line and "direct" in line]
    assert "deepseek-plugins" in deepseek and " xpeval " in builtin


def test_version_and_help_do_not_import_plugins_and_a_slow_one_is_named(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    slow = f"import pathlib, time\npathlib.Path({str(marker)!r}).write_text('imported')\ntime.sleep(3)\n"
    env = with_site(install_plugins(tmp_path / "site", {"sleepy": "None"}, distribution="slow", prelude=slow))
    for argv in (["--version"], ["--help"], ["run", "--help"], ["gate", "--help"]):
        done = xpeval(*argv, env=env)
        assert done.returncode == 0, (argv, done.stderr)
        assert not marker.exists(), f"`xpeval {' '.join(argv)}` imported the plugins"
    listed = xpeval("adapters", "--json", env=env)
    assert marker.exists(), "a command that reads the registry imports them"
    assert any(
        line.startswith("xpeval: plugin sleepy = slow:SLEEPY took ") and line.endswith(" s to import")
        for line in error_lines(listed)
    ), listed.stderr


FACTORIES = """
import dataclasses
def returns_text(contract, provider, settings):
    return "not an adapter"
def raises(contract, provider, settings):
    raise RuntimeError("a bug in the plugin")
"""


@pytest.mark.parametrize(
    ("adapter", "why"),
    [
        ("textual", "its factory returned str, not an Adapter"),
        ("raiser", "its factory raised RuntimeError: a bug in the plugin"),
    ],
)
@pytest.mark.parametrize(
    "mode", [["--no-baseline"], ["--mode", "record", "--target", "emulator"]], ids=["replay", "record"]
)
def test_a_plugin_factory_building_no_adapter_is_one_line_naming_adapter_and_distribution(
    tmp_path: Path, adapter: str, why: str, mode: list[str]
) -> None:
    entries = {
        "textual": f"dataclasses.replace({ENTRY}, factory=returns_text)",
        "raiser": f"dataclasses.replace({ENTRY}, factory=raises)",
    }
    env = with_site(install_plugins(tmp_path / "site", entries, distribution="factories", prelude=FACTORIES))
    ran = xpeval(
        "run", "--adapters", adapter, *mode, "--categories", "simple", "--no-progress", cwd=tmp_path, env=env
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr and "gate:" not in ran.stdout
    named = [line for line in error_lines(ran) if f"{adapter} of factories" in line]
    assert named == [f"xpeval: adapter {adapter} of factories: {why}"]
    assert not any("emulated" in line for line in ran.stdout.splitlines()), "no row was scored"


def test_a_plugin_raising_keyboard_interrupt_itself_is_refused(tmp_path: Path) -> None:
    raises = "raise KeyboardInterrupt\n"
    env = with_site(
        install_plugins(tmp_path / "site", {"fake-ctrl-c": "None"}, distribution="ki", prelude=raises)
    )
    listed = xpeval("adapters", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert error_lines(listed) == [
        "xpeval: plugin fake-ctrl-c = ki:FAKE_CTRL_C of ki refused: "
        "raised KeyboardInterrupt while loading, without a Ctrl-C"
    ]


def test_a_real_ctrl_c_while_a_plugin_loads_stops_xpeval(tmp_path: Path) -> None:
    marker = tmp_path / "loading"
    slow = f"import pathlib, time\npathlib.Path({str(marker)!r}).write_text('x')\ntime.sleep(60)\n"
    env = with_site(install_plugins(tmp_path / "site", {"sleepy": "None"}, distribution="slow", prelude=slow))
    process = subprocess.Popen(
        [sys.executable, "-m", "xpeval", "adapters", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(1200):  # until the plugin is loading (a fresh interpreter takes a while)
            if marker.exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), "the plugin never started loading"
        process.send_signal(signal.SIGINT)
        # Generous: on a loaded 2-core CI machine the interrupted interpreter's exit took >30 s
        # once. A Ctrl-C that went unnoticed shows anyway: the plugin's sleep would end, the
        # load finish and the exit code be 0, not 130.
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "xpeval: interrupted" and out == ""
