"""A plugin author's type checker sees every name of the plugin API (`xpeval.plugin`) as what it is:
`mypy --strict` on a module that imports each one reveals no `Any` (a lazily imported name the
`TYPE_CHECKING` block leaves out, or exports under a name mypy does not re-export, is `Any`)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import xpeval.plugin

ROOT = Path(__file__).resolve().parents[1]

UNFOLLOWED = (
    "openai",
    "anthropic",
    "google",
    "botocore",
    "boto3",
    "mistralai",
    "cohere",
    "pandas",
    "pyarrow",
    "mcp",
)
"""Packages mypy reads as `Any` here rather than analyses: the SDKs and tables xpeval uses
inside its modules, a third of mypy's work on the probe with a cold cache, as in every
clean-clone run (this test 14.8 s -> 9.3 s of CPU, measured 2026-12-07; the probe's revealed
types the same line for line). Leaving a package out can only make a type `Any`, never hide
one, so the check is as strict as with them."""


def _config(folder: Path) -> Path:
    """The repository's mypy settings (pyproject.toml), with UNFOLLOWED skipped."""
    skipped = ", ".join(f'"{name}.*"' for name in UNFOLLOWED)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    path = folder / "mypy.toml"
    path.write_text(f'{text}\n[[tool.mypy.overrides]]\nmodule = [{skipped}]\nfollow_imports = "skip"\n')
    tomllib.loads(path.read_text(encoding="utf-8"))  # still one valid document
    return path


@pytest.mark.slow
def test_mypy_strict_sees_no_any_in_the_plugin_api(tmp_path: Path) -> None:
    names = xpeval.plugin.__all__
    probe = tmp_path / "uses_the_plugin_api.py"
    probe.write_text(
        f"from xpeval.plugin import {', '.join(names)}\n"
        + "".join(f"reveal_type({name})\n" for name in names),
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",  # only the probe's lines; the package is checked by .ci/check
            f"--config-file={_config(tmp_path)}",
            # its own cache: strict options beside the repository's would invalidate its cache
            f"--cache-dir={ROOT / '.mypy_cache' / 'plugin-api-strict'}",
            str(probe),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    revealed = dict(re.findall(r":(\d+): note: Revealed type is \"(.*)\"", done.stdout))
    assert len(revealed) == len(names), done.stdout + done.stderr
    assert done.returncode == 0, done.stdout
    seen_as_any = [name for line, name in enumerate(names, start=2) if revealed[str(line)] == "Any"]
    assert seen_as_any == []
