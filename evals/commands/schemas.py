"""`xpeval schemas [--corpus DIR] [--adapters ID ...] [--json]`: schema acceptance per adapter.

Every registered adapter (or the ones named) x every schema file of the corpus: the verdict
(as-is / rewritten / refused), the losses the pass reported, the rules the sent definition
still breaks, and the fidelity of the rewrite. `--json` prints one line per pair; otherwise a
per-adapter table and reports/schema_acceptance.{csv,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from adapters.registry import adapter_ids, get_entry
from evals.errors import UserError
from evals.fidelity import DEFAULT_EXAMPLES, DEFAULT_SECONDS

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "schema_corpus"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schemas", help="schema acceptance: every adapter x every schema of a corpus (offline)"
    )
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of tool schema files (default: built-in)"
    )
    parser.add_argument(
        "--adapters", nargs="+", metavar="ID", help="adapter ids (default: every registered adapter)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON line per (adapter, schema)")
    parser.add_argument(
        "--examples", type=int, default=DEFAULT_EXAMPLES, help="instances per schema and side"
    )
    parser.add_argument(
        "--seconds", type=float, default=DEFAULT_SECONDS, help="generation time per schema side"
    )
    parser.add_argument(
        "--no-fidelity", action="store_true", help="acceptance only: skip the instance generation"
    )
    parser.add_argument("--workers", type=int, default=None, help="parallel processes (default: CPUs, max 4)")
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="where the csv/md go")
    parser.set_defaults(handler=run)


def selected_adapters(requested: list[str] | None) -> list[str]:
    """The adapters to measure, from the registry; an unknown id fails with `Unknown adapter`."""
    if not requested:
        return adapter_ids()
    ids = [part.strip() for item in requested for part in item.split(",") if part.strip()]
    for adapter_id in ids:
        get_entry(adapter_id)
    return list(dict.fromkeys(ids))


def run(args: argparse.Namespace) -> int:
    from evals.schema_acceptance import corpus_files, default_workers, measure_corpus

    adapters = selected_adapters(args.adapters)
    corpus: Path = args.corpus
    if not corpus.is_dir():
        raise UserError(f"Corpus folder not found: {corpus}")
    if not corpus_files(corpus):
        raise UserError(f"No schema files (*.json) under {corpus}")
    if args.examples < 1 or args.seconds <= 0:
        raise UserError("--examples must be at least 1 and --seconds positive")

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 20) == 0:
            print(f"schemas: {done}/{total} schema files x {len(adapters)} adapters", file=sys.stderr)

    rows = measure_corpus(
        corpus,
        adapters,
        examples=args.examples,
        seconds=args.seconds,
        fidelity=not args.no_fidelity,
        workers=args.workers or default_workers(),
        on_schema=progress,
    )
    if args.json:
        for row in rows:
            print(json.dumps(row.line(), ensure_ascii=False), flush=True)
        return 0
    return _report(list(rows), corpus, args.reports)


def _report(rows: list[Any], corpus: Path, directory: Path) -> int:
    from rich.console import Console
    from rich.table import Table

    from evals.schema_scorecard import pairs_frame, summary, write_report

    pairs = pairs_frame(rows)
    table = summary(pairs)
    view = Table(title=f"Schema acceptance - {corpus}", caption="offline: published rules, not live answers")
    shown = [column for column in _HEADERS if column in table.columns]
    for column in shown:
        view.add_column(_HEADERS[column], justify="left" if column == "adapter" else "right", no_wrap=True)
    for record in table[shown].itertuples(index=False):
        view.add_row(*(_cell(value) for value in record))
    console = Console()
    if not console.is_terminal:  # piped or captured: rich would assume 80 columns and squeeze the table
        console = Console(width=120)
    console.print(view)
    paths = write_report(pairs, directory, str(corpus))
    print(f"wrote {paths['csv']} and {paths['md']}", file=sys.stderr)
    return 0


_HEADERS = {
    "adapter": "adapter", "pairs": "pairs", "as_is": "as-is", "rewritten": "rewr", "refused": "refused",
    "sent_with_violations": "violating", "losses": "losses", "mean_loss_rate": "loss",
    "false_rejections": "false rej", "silent_changes": "silent",
}  # fmt: skip
"""The console shows these; the csv/md have every column."""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "-" if value != value else f"{value:.2f}"
    return str(value)


def write_default_report(directory: Path) -> Path | None:
    """reports/schema_acceptance.{csv,md} for every adapter over the project's own schema set
    (what `xpeval run` adds to its scorecard). Returns the md path."""
    from evals.schema_acceptance import default_workers, measure_corpus
    from evals.schema_scorecard import pairs_frame, write_report

    rows = measure_corpus(DEFAULT_CORPUS, adapter_ids(), examples=DEFAULT_EXAMPLES, seconds=DEFAULT_SECONDS,
                          fidelity=True, workers=default_workers())
    paths = write_report(pairs_frame(list(rows)), directory, str(DEFAULT_CORPUS))
    return Path(paths["md"])
