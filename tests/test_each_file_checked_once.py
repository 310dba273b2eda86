"""adapters/ and evals/ are also reachable as xpeval/adapters and xpeval/evals (the links of
docs/ARCHITECTURE.md, "One import name"). mypy checks, and pytest collects, each of their files
once, under its `xpeval.` name, whichever of the two paths it is given."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from mypy import find_sources
from mypy.config_parser import parse_config_file
from mypy.fscache import FileSystemCache
from mypy.options import Options

ROOT = Path(__file__).resolve().parents[1]


def _mypy_sources(monkeypatch: pytest.MonkeyPatch, paths: list[str] | None) -> list[find_sources.BuildSource]:
    monkeypatch.chdir(ROOT)  # mypy matches `exclude` against paths relative to where it runs
    options = Options()
    parse_config_file(options, lambda: None, "pyproject.toml", io.StringIO(), io.StringIO())
    return find_sources.create_source_list(paths or options.files or [], options, FileSystemCache())


@pytest.mark.parametrize("paths", [None, ["."]], ids=["configured-files", "mypy-dot"])
def test_mypy_checks_each_file_once_under_its_xpeval_name(
    monkeypatch: pytest.MonkeyPatch, paths: list[str] | None
) -> None:
    sources = _mypy_sources(monkeypatch, paths)
    files = Counter(os.path.realpath(source.path) for source in sources if source.path)
    assert [path for path, times in files.items() if times > 1] == []
    assert not [s.module for s in sources if s.module.split(".")[0] in ("adapters", "evals")]
    modules = {source.module for source in sources}
    assert {"xpeval.adapters.registry", "xpeval.evals.cli", "xpeval.plugin"} <= modules


def test_a_traceback_names_the_link_path_the_documents_cite_without_xpeval() -> None:
    """docs/ARCHITECTURE.md ("One import name"): a traceback shows `xpeval/evals/...`, the file a
    document cites as `evals/...`."""
    import xpeval.adapters.registry
    import xpeval.evals.cli

    for module, cited in [
        (xpeval.evals.cli, "evals/cli.py"),
        (xpeval.adapters.registry, "adapters/registry.py"),
    ]:
        shown = Path(module.__file__ or "")
        assert shown.relative_to(ROOT).as_posix() == f"xpeval/{cited}"
        assert (ROOT / cited).samefile(shown)


@pytest.mark.slow
def test_pytest_collects_the_shipped_suite_once_through_its_link() -> None:
    module = "conformance/test_capabilities.py"
    both_paths = [f"xpeval/evals/{module}", f"evals/{module}"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *both_paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert ids and len(ids) == len(set(ids))
    assert all(line.startswith(f"xpeval/evals/{module}::") for line in ids), ids[:3]
