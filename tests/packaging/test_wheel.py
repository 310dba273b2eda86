"""The wheel as another team installs it: one import name, and a good guest in their project
(issue 19's first "Done when", issue 20's "A good guest in the host's pytest").

Builds the wheel from this checkout, installs it with its dependencies from the configured
package indexes into a fresh venv (no --system-site-packages: a missing dependency must show),
next to a host project with its own `evals`, `adapters` and `tests` packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
import venv
import zipfile
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from tests._once import once_per_run
from tests.conformance._host import checks_per_adapter, run_pytest, write_host

# A fresh venv, the wheel and its dependencies installed, then three pytest runs of the host:
# minutes on a loaded 2-core machine, past the suite's default 300 s.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _run(*command: str | Path, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


QUIET_INSTALL = ("-q", "--no-compile")
"""pip's byte-compiling of every installed module (botocore, the SDKs, pandas) was half the
install's CPU (61 s of user+sys with it, 29 s without, measured 2026-12-04); the few modules a
test imports are compiled when imported."""


NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"
WARM_UP = """
import importlib, pkgutil
import pytest, xpeval
for info in pkgutil.walk_packages(xpeval.__path__, "xpeval.", onerror=lambda name: None):
    if info.name == "xpeval.__main__":  # importing it runs a command
        continue
    try:
        importlib.import_module(info.name)
    except BaseException:
        pass
"""
"""Run once in the fresh venv, where Python may write what it compiles: every xpeval module
imported (with them the SDKs, pandas and pyarrow they use) and pytest, so that their bytecode
is in the venv. The install leaves it out (QUIET_INSTALL), and where the environment sets
PYTHONDONTWRITEBYTECODE (this project's CI machine does) each of the tests' ten or so processes in
the venv compiled them from source again: 6.2 s of CPU for xpeval's CLI, the SDKs, pandas and
pytest, 3.5 s with their bytecode (measured 2026-12-07). It checks nothing (a module that fails
to import fails the tests that use it, as before), and every process of the tests runs in the
environment it had."""


PACKAGED = ["pyproject.toml", "README.md", "xpeval", "adapters", "evals", "docs"]
"""What the build reads (docs/: the documents xpeval/docs/ links to, shipped for the citations of
schema refusals); copied (links kept) so that no stale build/ of the checkout leaks in."""


def _source_copy(into: Path) -> Path:
    listed = _run("git", "ls-files", "-co", "--exclude-standard", "-z", "--", *PACKAGED, cwd=REPO_ROOT)
    for name in filter(None, listed.stdout.split("\0")):
        source, target = REPO_ROOT / name, into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return into


def _build_wheel(out: Path) -> None:
    source = _source_copy(out / "source")
    # Build isolation: pip takes the build backend pyproject.toml asks for from the package indexes.
    _run(sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", out, cwd=source)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, built once per test run (tests/_once.py)."""
    (built,) = once_per_run(tmp_path_factory, "wheel", _build_wheel).glob("xpeval-*.whl")
    return built


EXAMPLE = REPO_ROOT / "examples" / "ollama-xpeval"


@pytest.fixture(scope="session")
def venv_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel, examples/ollama-xpeval and pytest installed, once per test
    run (tests/_once.py): the venv and its `pip install` were most of each test below (two of
    them took 92 s and 86 s on a loaded machine, 2026-12-04), and both tests share it.

    Sharing keeps what each test means. Neither writes into the venv: each works in a project of
    its own under its `tmp_path`, and runs the venv's pytest and `xpeval` there. The example
    plugin adds one module (`ollama_xpeval`) and two entry points, and needs nothing but xpeval:
    it neither supplies a dependency the wheel fails to declare nor shadows a host's `evals`,
    `adapters` or `tests`. A host whose `[tool.xpeval]` names mimo alone now has another adapter
    installed beside it, which its conformance run must leave out (`counts["other"] == 0`)."""

    def install(env_dir: Path) -> None:
        venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
        # a copy: pip builds the plugin in its source folder
        plugin_source = shutil.copytree(EXAMPLE, env_dir / "ollama-xpeval")
        python = env_dir / "bin" / "python"
        _run(python, "-m", "pip", "install", *QUIET_INSTALL, wheel, plugin_source, "pytest>=8", cwd=env_dir)
        warm = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", NO_BYTECODE}}
        subprocess.run([python, "-c", WARM_UP], cwd=env_dir, env=warm, capture_output=True, timeout=900)

    return once_per_run(tmp_path_factory, "wheel-venv", install) / "bin" / "python"


def test_the_wheel_installs_xpeval_and_nothing_else_at_the_top_level(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")}
    assert top == {"xpeval"}, sorted(top)
    assert "xpeval/evals/conformance/pytest_plugin.py" in names
    assert "xpeval/evals/cases/builtin" in {name.rsplit("/", 1)[0] for name in names}
    assert not [name for name in names if "/tests/" in f"/{name}"]


HOST_PACKAGES = {
    "evals/__init__.py": 'NAME = "the host\'s evals"\n',
    "adapters/__init__.py": 'NAME = "the host\'s adapters"\n',
    "tests/test_own_packages.py": textwrap.dedent("""
        import adapters
        import evals


        def test_the_hosts_own_packages_are_imported():
            assert (evals.NAME, adapters.NAME) == ("the host's evals", "the host's adapters")
    """),
}


def test_a_host_project_runs_its_tests_unchanged_and_its_conformance_covers_its_adapter(
    venv_python: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    python = venv_python
    host = write_host(tmp_path / "host", table='adapters = ["mimo"]')
    for name, text in HOST_PACKAGES.items():
        (host / name).parent.mkdir(parents=True, exist_ok=True)
        (host / name).write_text(text)
    clean = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}

    plain = run_pytest(host, python=str(python), env=clean)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "4 passed" in plain.stdout, plain.stdout

    collected = run_pytest(host, "--xpeval-conformance", "--collect-only", python=str(python), env=clean)
    counts = checks_per_adapter(collected.stdout, ["mimo"])
    assert counts["other"] == 0 and counts["mimo"] > 30, counts

    conformance = run_pytest(host, "--xpeval-conformance", python=str(python), env=clean)
    assert conformance.returncode == 0, conformance.stdout[-3000:] + conformance.stderr[-2000:]
    summary = conformance.stdout.strip().splitlines()[-1]
    passed = int(summary.split(" passed")[0].split()[-1])
    skipped = int(summary.split(" skipped")[0].split()[-1]) if " skipped" in summary else 0
    assert passed + skipped == counts["mimo"] + 4, summary  # the host's 4 tests and mimo's checks
    print(f"host runs {time.monotonic() - started:.1f} s; {counts['mimo']} checks for mimo: {summary}")


def test_the_example_plugin_in_a_fresh_venv_passes_conformance_and_records_then_replays(
    venv_python: Path, tmp_path: Path
) -> None:
    """Issue 20's worked example as its author ships it: `pip install` of the wheel and of
    examples/ollama-xpeval (a wire and an adapter of its own, through `xpeval.plugin` only) into
    a fresh venv, then in the plugin's own project: the conformance suite, a recording against the
    loopback emulator, the baseline from it, and an offline replay that passes its gate."""
    python, xpeval = venv_python, venv_python.parent / "xpeval"
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(EXAMPLE / "pyproject.toml", project / "pyproject.toml")  # its [tool.xpeval] names ollama
    dropped = {"PYTHONPATH", "VIRTUAL_ENV", "XPEVAL_CASSETTE_MODE"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}

    listed = subprocess.run(
        [xpeval, "adapters", "--json"], cwd=project, env=clean, capture_output=True, text=True, timeout=300
    )
    assert listed.returncode == 0, listed.stderr
    assert '"ollama-chat"' in listed.stdout and '"ollama-xpeval"' in listed.stdout, listed.stdout[-2000:]

    conformance = run_pytest(project, "--xpeval-conformance", python=str(python), env=clean, timeout=600)
    assert conformance.returncode == 0, conformance.stdout[-3000:] + conformance.stderr[-2000:]
    assert " passed" in conformance.stdout.strip().splitlines()[-1], conformance.stdout[-500:]

    def xp(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [xpeval, *args, "--no-progress"] if args[0] == "run" else [xpeval, *args],
            cwd=project,
            env=clean,
            capture_output=True,
            text=True,
            timeout=600,
        )

    recorded = xp("run", "--mode", "record", "--target", "emulator", "--categories", "simple")
    assert recorded.returncode == 0, recorded.stdout[-2000:] + recorded.stderr[-2000:]
    assert any((project / "cassettes" / "ollama").rglob("*.yaml")), "the recording is in the project"
    written = xp("gate", "--update-baseline")
    assert written.returncode == 0, written.stdout[-2000:] + written.stderr[-2000:]
    replayed = xp("run", "--categories", "simple")
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
    assert "ollama: replay cassettes" in replayed.stderr, replayed.stderr[-2000:]
    assert "gate: passed" in replayed.stdout, replayed.stdout[-1000:]


RECURSIVE_TOOL = (
    '{"name": "build_tree", "description": "A tree", "parameters": {"type": "object", "$defs": {"Node": '
    '{"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}, '
    '"properties": {"root": {"$ref": "#/$defs/Node"}}}}'
)


def test_a_refusals_source_is_a_file_of_the_installed_package(venv_python: Path, tmp_path: Path) -> None:
    """Issue 36: refusals cited `docs/provider-schema-rules.md §6`, absent from an installed
    package. In a project of its own with xpeval installed from the wheel, `xpeval schemas` names
    where the sources are, and the cited section is there."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "tools.json").write_text(RECURSIVE_TOOL, encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    done = subprocess.run(
        [
            venv_python.parent / "xpeval",
            "schemas",
            "--tools",
            "tools.json",
            "--adapters",
            "vertex-ai",
            "--no-fidelity",
        ],
        cwd=project,
        env={**clean, "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = " ".join(done.stdout.split())  # the table's lines wrap at the terminal's width
    assert "[rule gemini.parameters.recursion; docs/provider-schema-rules.md §6" in said, done.stdout
    root = Path(said.split("files of the installed xpeval, under ", 1)[1].split()[0])
    assert root.is_relative_to(venv_python.parent.parent), root  # the venv's copy, not this checkout
    assert "## 6. " in (root / "docs" / "provider-schema-rules.md").read_text(encoding="utf-8")


def test_the_wheel_holds_every_document_a_schema_refusal_cites(wheel: Path) -> None:
    from xpeval.adapters.schema.refusals import REFUSAL_RULES

    names = set(zipfile.ZipFile(wheel).namelist())
    cited = {rule.where.partition(" ")[0] for rule in REFUSAL_RULES.values()}
    assert {f"xpeval/{document}" for document in cited} <= names, sorted(cited)
