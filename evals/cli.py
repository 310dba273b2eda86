"""`xpeval`: the command line. Commands live in `xpeval.evals.commands`, one module each.

Startup is paid by every command, so the parser is built lazily: each command module imports
only the standard library when it is imported (its `SUMMARY` is the line `xpeval --help`
shows), and only the command being run registers its options, importing what they need. So
`xpeval --version` and `xpeval --help` import no SDK, no pandas and no plugin
(`tests/test_cli_startup.py`, `benchmarks/cli_startup.py`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from xpeval.errors import ExitCode, MissingExtraError, UserError
from xpeval.evals import commands

_EXIT_CODES = """exit codes (every command):
  0    passed
  1    the verdict failed (a regression, a vendor out of line, a refused schema)
  2    the input is wrong (a flag, a file, a project setting)
  3    an optional dependency is missing (the message names the extra to install)
  4    an internal error in xpeval or a plugin (--debug or XPEVAL_DEBUG=1 shows the traceback)
  130  interrupted"""


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default unless its help already says it or there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, [], argparse.SUPPRESS):
            return text
        return str(super()._get_help_string(action))


class _Parser(argparse.ArgumentParser):
    """Every command's --help shows its defaults."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _DefaultsFormatter)
        super().__init__(*args, **kwargs)


class _VersionAction(argparse.Action):
    """`--version`: the installed version, looked up only when asked for (reading the package
    metadata costs every other command's startup otherwise)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from xpeval.evals.version import xpeval_version

        print(f"xpeval {xpeval_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def command_modules() -> dict[str, ModuleType]:
    """Every command by its name (`local-model` is `commands/local_model.py`), imported: cheap,
    since a command module imports only the standard library at import time."""
    found = {}
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            found[info.name.replace("_", "-")] = importlib.import_module(f"{commands.__name__}.{info.name}")
    return found


def _command_in(argv: Sequence[str]) -> str | None:
    """The command an argument list names: its first word that is not an option (the top level
    has only `--help` and `--version`, neither of which takes a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv` (default: `sys.argv[1:]`): the command it names with all its
    options, every other command by name and summary only."""
    chosen = _command_in(sys.argv[1:] if argv is None else argv)
    parser = _Parser(
        prog="xpeval",
        description="Cross-provider conformance and evaluation for LLM tool calling.",
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error (or XPEVAL_DEBUG=1)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in command_modules().items():
        if name == chosen:
            module.register(subparsers)
        else:
            subparsers.add_parser(name, help=module.SUMMARY)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status keeps `ExitCode`'s contract whatever goes wrong."""
    words = list(sys.argv[1:] if argv is None else argv)
    # `--debug` is a top-level option that may be written anywhere: `xpeval run --debug`.
    if "--debug" in words:
        words = ["--debug", *(word for word in words if word != "--debug")]
    parser = build_parser(words)
    args = parser.parse_args(words)
    if not getattr(args, "handler", None):
        parser.print_help()
        return ExitCode.BAD_INPUT
    try:
        if getattr(args, "uses_project", False):
            _say_project()
        _load_plugins()
        code = int(args.handler(args) or 0)
    except KeyboardInterrupt:  # a real Ctrl-C, while a plugin loads too (xpeval.adapters.plugins)
        print("xpeval: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.PASSED
    except Exception as exc:
        return _report_error(exc, debug=args.debug or bool(os.environ.get("XPEVAL_DEBUG")))
    _name_refused_plugins()
    return code


def _report_error(exc: Exception, *, debug: bool) -> int:
    """One scrubbed line per error, and the exit code its kind has: bad input (2), a missing
    optional dependency (3), anything else an internal error (4), never the code of a failed
    verdict (1), so CI can tell them apart."""
    from xpeval.evals.extras import extra_for_module
    from xpeval.evals.scrub import scrub_line

    if isinstance(exc, ModuleNotFoundError) and (extra := extra_for_module(exc.name)):
        exc = MissingExtraError(extra, f"this command needs {exc.name}, which is not installed")
    if isinstance(exc, UserError):  # the root of every input error (xpeval.errors): its type's code
        print(f"xpeval: {scrub_line(str(exc))}", file=sys.stderr)
        _name_refused_plugins(already_said=str(exc))
        return int(exc.exit_code)
    if debug:
        for line in traceback.format_exception(exc):
            print(scrub_line(line.rstrip("\n")), file=sys.stderr)
    hint = "" if debug else " (run again with --debug, or XPEVAL_DEBUG=1, for the traceback)"
    print(f"xpeval: internal error: {type(exc).__name__}: {scrub_line(str(exc))}{hint}", file=sys.stderr)
    return ExitCode.INTERNAL


def _say_project() -> None:
    """Which project the command works in, on stderr, before anything else it says."""
    from xpeval.evals.project import project_line, project_settings
    from xpeval.evals.scrub import scrub_line

    print(f"xpeval: {scrub_line(project_line(project_settings()))}", file=sys.stderr, flush=True)


def _load_plugins() -> None:
    """The adapters and wires of xpeval and of installed plugins, before any command runs (after
    parsing: `--help` and `--version` load none)."""
    from xpeval.adapters.registry import ensure_loaded

    ensure_loaded()


def _name_refused_plugins(already_said: str = "") -> None:
    """Every refused plugin gets a line once the command ends, whether it needed the plugin or
    not: never silently (unless the command's error named it already). Only when the command
    loaded the registry: importing plugins here would cost the commands that need none."""
    if "xpeval.adapters.plugins" not in sys.modules:
        return
    from xpeval.adapters.plugins import refused_plugins
    from xpeval.evals.scrub import scrub_line

    for plugin in refused_plugins():
        if plugin.line() not in already_said:
            print(scrub_line(f"xpeval: {plugin.line()}"), file=sys.stderr)


def console_main() -> int:
    """The `xpeval` console script (and `python -m xpeval`): `main` with the collector tuned for
    a short-lived process that builds many objects and keeps most of them (SDK modules and
    response models, result rows), as mypy does for its own runs. With CPython's default
    thresholds the collector took 5 % of a replay of the committed cassettes' CPU, mostly in
    full collections over the imported SDKs (2.5 s of 47 s, timed with `gc.callbacks`); with
    these, 1 % (0.5 s). Library callers (`run_suite`, the pytest plugin) keep their process's
    settings.

    When the command is done, everything it built is frozen out of the collector's reach: the
    process is about to exit, and the collections the interpreter runs while it tears the
    modules down went over every object the run kept (1.5 s of a 26 s replay, 6 % of its CPU,
    measured as the process's CPU at the end of `main` against its total; 0.14 s frozen).
    Exit handlers and finalizers still run."""
    import gc

    gc.set_threshold(100_000, 50, 100)
    code = main()
    gc.freeze()
    return code


if __name__ == "__main__":
    raise SystemExit(console_main())
