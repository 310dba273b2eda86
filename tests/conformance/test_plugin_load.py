"""xpeval's pytest plugin is loaded into every test run of a project that installs xpeval
(entry point `pytest11: xpeval`), whether or not it asks anything of xpeval: loading it imports
no cassette machinery, no HTTP client and no SDK. Checked in a fresh interpreter (an import made
by an earlier test would hide one made here)."""

from __future__ import annotations

import json
import subprocess
import sys

UNASKED = ("vcr", "httpx2", "yaml", "openai", "anthropic", "google.genai", "pandas")
"""What a host's test run that uses no xpeval fixture must not pay for."""


def test_loading_the_pytest_plugin_imports_no_cassette_machinery_client_or_sdk() -> None:
    code = (
        "import json, sys\n"
        "import xpeval.evals.conformance.pytest_plugin\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    modules = json.loads(done.stdout)

    loaded = sorted(
        {name for name in modules for heavy in UNASKED if name == heavy or name.startswith(f"{heavy}.")}
    )
    assert loaded == []
