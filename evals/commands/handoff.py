"""`xpeval handoff [--corpus DIR ...] [--per-source N] [--markdown | --json]`: every recorded
multi-turn conversation with tool calls continued through every registered adapter (each ordered
pair): the history converted for the target, its request through the target's validation,
schema checker and strict emulator. A cell passes, names the rule that makes the pair
impossible, or fails (exit 1). docs/provider-loop-rules.md, "Handoff"."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SUMMARY = "continue recorded conversations through every other adapter: the handoff matrix"
"""What `xpeval --help` says of this command."""
DEFAULT_PER_SOURCE = 3


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("handoff", help=SUMMARY)
    parser.add_argument(
        "--cassettes",
        type=Path,
        help="the committed cassettes (<adapter>/<model>/<case>.yaml) whose built-in multi-turn cases "
        "are read (default: the project's)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=[],
        help="a tree of real recordings laid out <wire>/<file>.yaml (repeatable; "
        'docs/provider-loop-rules.md, "Handoff", says which the README\'s matrix reads)',
    )
    parser.add_argument(
        "--per-source",
        type=int,
        default=DEFAULT_PER_SOURCE,
        help="conversations read from the committed cassettes per source adapter",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--markdown", action="store_true", help="print the matrix as a Markdown table")
    shown.add_argument("--json", action="store_true", help="one JSON line per (conversation, target)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from xpeval.errors import UserError
    from xpeval.evals.handoff.report import matrix_report

    if args.per_source < 1:
        raise UserError("--per-source must be at least 1")
    report = matrix_report(args.cassettes, args.corpus, args.per_source)
    for skipped in report.skipped:
        print(f"xpeval: skipped {skipped.id}: {skipped.reason}", file=sys.stderr)
    matrix = report.matrix
    if args.json:
        for outcome in matrix.outcomes:
            print(json.dumps(outcome.row(), ensure_ascii=False))
    elif args.markdown:
        print(report.markdown())
    else:
        _print_table(report)
    figures = matrix.figures()
    print(
        f"xpeval: {figures['pairs']} ordered pairs over {figures['conversations']} conversations: "
        f"{figures['pass']} pass, {figures['impossible']} impossible {figures['impossible_by_rule']}, "
        f"{figures['fail']} fail",
        file=sys.stderr,
    )
    for outcome in matrix.failed:
        print(
            f"xpeval: FAIL {outcome.source} -> {outcome.target} ({outcome.conversation}): "
            f"{outcome.rule}: {outcome.detail}",
            file=sys.stderr,
        )
    return 1 if matrix.failed else 0


def _print_table(report: Any) -> None:
    from rich.table import Table

    from xpeval.evals.commands._tables import print_table

    matrix = report.matrix
    table = Table(
        "source \\ target",
        *matrix.adapters,
        title="Each recorded conversation continued through each adapter: pass, or the rule that makes it "
        "impossible (docs/provider-loop-rules.md, Handoff)",
    )
    for source in matrix.adapters:
        table.add_row(source, *(matrix.cell(source, target) for target in matrix.adapters))
    print_table(table, whole=1)
