"""`xpeval` and `xpeval.adapters` export a small typed public API: `__all__` is exactly what they
offer, every name resolves, and the package says it is typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import xpeval
import xpeval.adapters


@pytest.mark.parametrize("package", [xpeval, xpeval.adapters], ids=["xpeval", "xpeval.adapters"])
def test_all_lists_every_export_and_each_resolves(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert names == sorted(set(names))
    for name in names:
        assert getattr(package, name) is not None
    with pytest.raises(AttributeError):
        package.nothing_of_this_name  # type: ignore[attr-defined]  # noqa: B018


def test_the_package_is_marked_typed() -> None:
    assert (Path(xpeval.__file__).parent / "py.typed").is_file()


def test_importing_the_packages_imports_no_sdk_and_no_pandas() -> None:
    code = (
        "import xpeval, xpeval.adapters, xpeval.evals, sys; "
        "print(sorted(m for m in ('openai', 'anthropic', 'google.genai', 'pandas') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_library_does_what_the_cli_does(tmp_path: Path) -> None:
    outcome = xpeval.run_suite(
        xpeval.SuiteConfig(
            adapters=("mimo",),
            categories=("irrelevance",),
            results=tmp_path / "r.jsonl",
            reports=tmp_path / "reports",
        )
    )
    assert outcome.passed and len(outcome.frame) == 14
    assert xpeval.load_run(tmp_path / "r.jsonl").frame.equals(outcome.frame)
