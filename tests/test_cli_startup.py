"""Every command pays the CLI's startup, so `xpeval --version` and `xpeval --help` import nothing
heavy: no SDK, no pandas, no vcrpy, no plugin of another package. Checked in a fresh interpreter
(an import made by an earlier test would hide one made here); the timing goal itself lives in
benchmarks/cli_startup.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("openai", "anthropic", "google.genai", "pandas", "pyarrow", "vcr", "pydantic", "yaml", "rich", "mcp")
"""What no startup may import: the SDKs, the tables, the cassette machinery, the plugins' registry
(plugins are found through entry points by `xpeval.adapters.registry`)."""


def _modules_after(*argv: str) -> tuple[str, list[str]]:
    """(what `xpeval ARGV` printed, the modules it left imported), in a fresh interpreter."""
    code = (
        "import contextlib, io, json, sys\n"
        "from xpeval.evals.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        main({list(argv)!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps([out.getvalue(), sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    printed, modules = json.loads(done.stdout)
    return printed, modules


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []], ids=["version", "help", "no-command"])
def test_startup_imports_no_sdk_pandas_vcrpy_or_registry(argv: list[str]) -> None:
    printed, modules = _modules_after(*argv)
    assert printed.startswith(("xpeval ", "usage: xpeval")), printed
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert heavy == [], f"`xpeval {' '.join(argv)}` imported {heavy[:10]}"
    assert "xpeval.adapters.registry" not in modules, "the registry (and with it the plugins) is loaded"


def test_help_lists_every_command_with_its_summary() -> None:
    from xpeval.evals.cli import command_modules

    printed, _ = _modules_after("--help")
    for name, module in command_modules().items():
        assert name in printed, f"{name} missing from xpeval --help"
        assert module.SUMMARY.split()[0] in printed


def test_each_command_module_registers_the_command_named_after_it() -> None:
    """`xpeval local-model ...` is commands/local_model.py: the CLI registers only the command
    named on the line, so a module registering another name would leave that command empty."""
    import argparse

    from xpeval.evals.cli import command_modules

    for name, module in command_modules().items():
        subparsers = argparse.ArgumentParser().add_subparsers()
        module.register(subparsers)
        assert list(subparsers.choices) == [name]
