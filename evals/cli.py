"""`xpeval`: the command line. Commands live in `xpeval.evals.commands`, one module each."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from typing import Any

from xpeval.evals import commands
from xpeval.evals.errors import UserError


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


def _version() -> str:
    from xpeval.evals.cassettes.meta import xpeval_version

    return xpeval_version()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="xpeval", description="Cross-provider conformance and evaluation for LLM tool calling."
    )
    parser.add_argument("--version", action="version", version=f"xpeval {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{module_info.name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from xpeval.adapters.registry import RegistryError, UnknownAdapterError

    try:
        return int(args.handler(args) or 0)
    except (UnknownAdapterError, RegistryError, UserError) as exc:
        from xpeval.evals.scrub import scrub_line

        print(f"xpeval: {scrub_line(str(exc))}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        print("xpeval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
