"""`xpeval merge SHARD.jsonl ... --out merged.jsonl`: the shards of a CI matrix as one run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

SUMMARY = "merge the results files of `xpeval run --shard i/N` into one complete run for `xpeval gate`"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("merge", help=SUMMARY)
    parser.add_argument(
        "shards", nargs="+", type=Path, metavar="SHARD.jsonl", help="each shard's results file"
    )
    parser.add_argument("--out", type=Path, required=True, help="the merged results file to write")
    parser.set_defaults(handler=run, uses_project=True)


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.project import project_settings
    from xpeval.evals.results.merge import merge_shards
    from xpeval.evals.verdict.custody import check_custody

    merged = merge_shards(args.shards, args.out, vouch=check_custody, root=project_settings().root)
    print(
        f"xpeval: merged {merged.shards} shards into {merged.path} ({merged.episodes} episodes, run "
        f"{merged.header.run}); judge it with `xpeval gate --results {merged.path}`",
        file=sys.stderr,
    )
    return 0
