"""`xpeval decode CASSETTE [--wire W] [--json]`: what each recorded response decodes to."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

SUMMARY = "decode a vcrpy cassette's responses through the SDKs and the wires"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("decode", help=SUMMARY)
    parser.add_argument("cassette", help="path to a vcrpy cassette (YAML)")
    parser.add_argument(
        "--wire",
        help="wire to decode with, built in or a plugin's (`xpeval adapters`; default: from each URL)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON line per interaction")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.cassettes import load_cassette
    from xpeval.evals.cassettes.decode import decode_cassette

    rows = decode_cassette(
        load_cassette(args.cassette),
        args.wire,
        on_skip=lambda note: print(f"xpeval: skipped {note}", file=sys.stderr),
    )
    failed = sum(1 for row in rows if "decode_error" in row)
    if failed:
        print(f"xpeval: {failed} of {len(rows)} interaction(s) could not be decoded", file=sys.stderr)
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 1 if failed else 0
    from rich.table import Table

    from xpeval.evals.commands._tables import print_table

    table = Table("#", "status", "tool calls", "text", "finish", "error")
    for row in rows:
        calls = "\n".join(
            f"{c['name']}({c['raw_arguments']!r}: {c['parse_error']})"
            if "parse_error" in c
            else f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})"
            for c in row["tool_calls"]
        )
        text = row["text"] or ""
        if row["refusal"]:
            text = f"{text}\nrefusal: {row['refusal']}".strip()
        table.add_row(
            str(row["interaction"]),
            str(row["status"]),
            calls or "-",
            text if len(text) <= 80 else text[:77] + "...",
            str(row["finish_reason"]),
            row.get("decode_error") or row["error_type"] or "-",
        )
    print_table(table, whole=1)
    return 1 if failed else 0
