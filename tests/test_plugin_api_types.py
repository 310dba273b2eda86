"""A plugin author's type checker sees every name of the plugin API (`xpeval.plugin`) as what it is:
`mypy --strict` on a module that imports each one reveals no `Any` (a lazily imported name the
`TYPE_CHECKING` block leaves out, or exports under a name mypy does not re-export, is `Any`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import xpeval.plugin

ROOT = Path(__file__).resolve().parents[1]


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
