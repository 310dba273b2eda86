"""Every input error xpeval raises is a `UserError` (`xpeval.errors`, the one root): the
registry's, a wire's, a dialect's and a cassette's included. The CLI maps an error to its exit
code by its type alone, whichever modules the command imported, so a bad plugin wire or dialect
is one line and exit 2, never an internal error (exit 4)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._cli import without_project_line
from tests._corpus import REPO_ROOT
from xpeval import errors
from xpeval.adapters.registry import get_entry, select_adapters
from xpeval.adapters.schema import dialects
from xpeval.adapters.wires import catalog
from xpeval.evals.cassettes import load_cassette

RAISE_FROM_ADAPTERS_COMMAND = """
import xpeval.evals.commands.adapters as command
def run(args):
{body}
command.run = run
from xpeval.evals.cli import console_main
raise SystemExit(console_main())
"""
"""`xpeval adapters` whose handler does what a command does with bad input: the error is raised
by the module that finds it (the registry, the wire catalog, the dialects, the cassette reader)."""

BAD_INPUTS = {
    "unknown-adapter": (
        "    from xpeval.adapters.registry import get_entry\n    get_entry('no-such-adapter')",
        "Unknown adapter: no-such-adapter",
    ),
    "bad-wire": (
        "    from xpeval.adapters.wires.catalog import register_wire\n    register_wire(object())",
        "a wire plugin must be a WirePlugin, not a object",
    ),
    "bad-dialect": (
        "    from xpeval.adapters.schema.dialects import register_dialect\n    register_dialect(object())",
        "DialectSpec",
    ),
    "bad-cassette": (
        "    from xpeval.evals.cassettes import load_cassette\n    load_cassette('not-a-cassette.yaml')",
        "not-a-cassette.yaml",
    ),
}


@pytest.mark.parametrize(("body", "said"), list(BAD_INPUTS.values()), ids=list(BAD_INPUTS))
def test_the_cli_says_a_registry_wire_dialect_or_cassette_error_in_one_line_and_exits_2(
    tmp_path: Path, body: str, said: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XPEVAL_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run(
        [sys.executable, "-c", RAISE_FROM_ADAPTERS_COMMAND.format(body=body), "adapters"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == errors.ExitCode.BAD_INPUT, done.stderr
    lines = without_project_line(done.stderr).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xpeval: ") and said in lines[0], done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_each_module_raises_the_root_s_errors_and_they_keep_their_old_bases(tmp_path: Path) -> None:
    with pytest.raises(errors.UnknownAdapterError) as unknown:
        get_entry("no-such-adapter")
    with pytest.raises(errors.UnknownAdapterError):
        select_adapters(["openai-chat,no-such-adapter"], named_by="--adapters")
    with pytest.raises(errors.WireError) as wire:
        catalog.register_wire(object())  # type: ignore[arg-type]
    with pytest.raises(errors.DialectError) as dialect:
        dialects.register_dialect(object())  # type: ignore[arg-type]
    (tmp_path / "broken.yaml").write_text("interactions: 3\n")
    with pytest.raises(errors.CassetteError) as cassette:
        load_cassette(tmp_path / "broken.yaml")
    for raised in (unknown, wire, dialect, cassette):
        assert isinstance(raised.value, errors.UserError), type(raised.value).__mro__
        assert raised.value.exit_code == errors.ExitCode.BAD_INPUT
    assert isinstance(unknown.value, errors.RegistryError) and isinstance(unknown.value, LookupError)
    assert unknown.value.adapter_id == "no-such-adapter"
    assert isinstance(wire.value, ValueError) and isinstance(dialect.value, ValueError)


def test_the_errors_are_defined_once_and_every_public_name_is_that_one() -> None:
    import xpeval
    import xpeval.adapters
    import xpeval.evals.cassettes
    import xpeval.plugin

    assert xpeval.UserError is errors.UserError
    assert xpeval.adapters.RegistryError is errors.RegistryError
    assert xpeval.adapters.UnknownAdapterError is errors.UnknownAdapterError
    assert xpeval.plugin.WireError is errors.WireError
    assert xpeval.plugin.RegistryError is errors.RegistryError
    assert xpeval.evals.cassettes.CassetteError is errors.CassetteError
    defined = [
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, Exception) and value.__module__ == errors.__name__
    ]
    assert all(issubclass(getattr(errors, name), errors.UserError) for name in defined), defined
