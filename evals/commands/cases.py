"""`xpeval cases list [--json]`, `xpeval cases bfcl [--categories ...] [--out DIR]` and
`xpeval cases requests FILE.jsonl --out DIR [--strict]` (real traffic as unlabelled cases, line
by line: each refused line listed with its number and reason).

`list` shows the cases of a folder (the project's `[tool.xpeval] cases`, else the built-in
set). `bfcl` converts the BFCL data of the installed bfcl-eval package into cases: JSON Lines
on stdout, or one
`bfcl_<category>.jsonl` per BFCL category in `--out DIR` (a folder `xpeval cases list --dir`
and the runner read); a summary and every skipped entry with its reason go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from xpeval.errors import UserError

if TYPE_CHECKING:
    from xpeval.evals.cases.bfcl_data import Converted
    from xpeval.evals.cases.model import Case


SUMMARY = "list eval cases; import BFCL cases"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("cases", help=SUMMARY)
    actions = parser.add_subparsers(dest="cases_command", metavar="ACTION", required=True)

    listing = actions.add_parser(
        "list", help="list the cases of a folder (default: [tool.xpeval] cases, else the built-in set)"
    )
    listing.add_argument("--json", action="store_true", help="print a JSON list")
    listing.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="case folder or file to list (default: [tool.xpeval] cases, else the built-in set)",
    )
    listing.add_argument("--categories", nargs="+", metavar="CATEGORY", help="only these categories")
    listing.set_defaults(handler=run_list, uses_project=True)

    schema = actions.add_parser("schema", help="print the JSON Schema of a case file (for editors and CI)")
    schema.set_defaults(handler=run_schema)

    validate = actions.add_parser(
        "validate", help="check every case file of a folder; exit 2 naming each problem"
    )
    validate.add_argument("dir", type=Path, help="case folder or file")
    validate.set_defaults(handler=run_validate)

    bfcl = actions.add_parser("bfcl", help="convert the installed bfcl-eval package's data into cases")
    bfcl.add_argument(
        "--categories",
        nargs="+",
        metavar="CATEGORY",
        help="BFCL categories (e.g. simple_python live_parallel) or ours (e.g. parallel); "
        "comma-separated also works; default: every importable one",
    )
    bfcl.add_argument("--out", type=Path, help="write bfcl_<category>.jsonl files here instead of stdout")
    bfcl.add_argument("--limit", type=int, help="at most this many cases per BFCL category (the first ones)")
    bfcl.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="N|CATEGORY=N",
        help="a seeded random sample of N cases per BFCL category (CATEGORY=N for one category)",
    )
    bfcl.add_argument(
        "--seed", type=int, default=0, help="seed of --sample (the same sample on every machine)"
    )
    bfcl.set_defaults(handler=run_bfcl)

    requests = actions.add_parser(
        "requests",
        help="turn OpenAI Chat request bodies (JSON lines) into unlabelled cases, judged against a reference",
    )
    requests.add_argument(
        "file", type=Path, help="JSON lines: messages, tools, tool_choice[, parallel_tool_calls]"
    )
    requests.add_argument(
        "--out",
        type=Path,
        required=True,
        help="write <prefix>.jsonl here (a case folder; more files if large)",
    )
    requests.add_argument(
        "--prefix", help="case id prefix (default: the file's name): ids are <prefix>_<line>"
    )
    requests.add_argument(
        "--strict",
        action="store_true",
        help="write nothing when any line is refused (default: import the others, list the refused)",
    )
    requests.set_defaults(handler=run_requests)


def _split(values: Iterable[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def case_rows(source: Path, categories: list[str] | None = None) -> list[dict[str, Any]]:
    """One row per case: id, category, tool names and the file (relative to the folder)."""
    from xpeval.evals.cases import CATEGORIES, load_cases

    if categories:
        unknown = [c for c in categories if c not in CATEGORIES]
        if unknown:
            raise UserError(f"unknown category {unknown[0]!r}; choose from {', '.join(CATEGORIES)}")
    loaded = load_cases(source, categories=categories or None)  # type: ignore[arg-type]
    return [
        {
            "id": item.case.id,
            "category": item.case.category,
            "tools": [t.name for t in item.case.tools],
            "file": item.file,
        }
        for item in loaded
    ]


def run_list(args: argparse.Namespace) -> int:
    from xpeval.evals.cases.loader import BUILTIN_DIR
    from xpeval.evals.project import project_settings

    folder: Path = args.dir or project_settings().cases or BUILTIN_DIR
    rows = case_rows(folder, _split(args.categories or []))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.table import Table

    from xpeval.evals.commands._tables import print_table

    table = Table("id", "category", "tools", "file", title=f"{len(rows)} cases in {folder}")
    for row in rows:
        table.add_row(row["id"], row["category"], ", ".join(row["tools"]), row["file"])
    print_table(table, whole=2)
    return 0


def case_file_schema() -> dict[str, Any]:
    """The JSON Schema of a case file: one case, or a `cases:` list (plus `x-` anchor keys)."""
    from xpeval.evals.cases.model import Case

    case = Case.model_json_schema(ref_template="#/$defs/{model}")
    defs = case.pop("$defs", {})
    defs["Case"] = case
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "xpeval case file",
        "description": "One case, or a mapping with a `cases` list; other top-level keys start with `x-` "
        "and hold YAML anchors (see docs/cases.md). A JSON Lines file holds one case per line.",
        "anyOf": [
            {"$ref": "#/$defs/Case"},
            {
                "type": "object",
                "required": ["cases"],
                "properties": {"cases": {"type": "array", "items": {"$ref": "#/$defs/Case"}}},
                "patternProperties": {"^x-": {}},
                "additionalProperties": False,
            },
        ],
        "$defs": defs,
    }


def run_schema(args: argparse.Namespace) -> int:
    print(json.dumps(case_file_schema(), indent=2))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    """Every problem of every case file, one line each, then their count (exit 2); else a
    count of the valid cases by category."""
    from xpeval.evals.cases.loader import CaseFileProblems, case_files, read_case_files
    from xpeval.evals.project import input_limits

    files, root = case_files(args.dir)
    if not files:
        raise UserError(f"{args.dir}: no case files (*.yaml, *.yml, *.jsonl)")
    try:
        loaded = read_case_files(files, root, input_limits())
    except CaseFileProblems as problems:
        for line in problems.lines:
            print(f"xpeval: {line}", file=sys.stderr)
        if problems.count > 1:  # one problem stays one line
            print(f"xpeval: {problems.summary()}", file=sys.stderr)
        return int(problems.exit_code)
    counts: dict[str, int] = {}
    for item in loaded:
        counts[item.case.category] = counts.get(item.case.category, 0) + 1
    summary = ", ".join(f"{n} {category}" for category, n in sorted(counts.items()))
    print(f"{sum(counts.values())} cases in {len(files)} file(s) are valid ({summary})")
    return 0


def bfcl_categories(requested: list[str]) -> list[str]:
    """BFCL category names to import: ours expand to theirs; refused ones say why."""
    from xpeval.evals.cases.bfcl import CATEGORY_MAP, NOT_IMPORTED
    from xpeval.evals.cases.model import CATEGORIES

    if not requested:
        return list(CATEGORY_MAP)
    chosen: list[str] = []
    for name in requested:
        if name in NOT_IMPORTED:
            raise UserError(f"BFCL category {name!r} is not imported: {NOT_IMPORTED[name]}")
        if name in CATEGORY_MAP:
            expanded = [name]
        elif name in CATEGORIES:
            expanded = [bfcl for bfcl, ours in CATEGORY_MAP.items() if ours == name]
            if not expanded:
                raise UserError(f"no importable BFCL category maps to {name!r}")
        else:
            raise UserError(
                f"unknown BFCL category {name!r}; choose from {', '.join(CATEGORY_MAP)} "
                f"or one of ours: {', '.join(CATEGORIES)}"
            )
        chosen.extend(c for c in expanded if c not in chosen)
    return chosen


def run_bfcl(args: argparse.Namespace) -> int:
    import random

    from xpeval.evals.cases.bfcl_data import BfclDataError, bfcl_data_dir, category_files, convert_category

    categories = bfcl_categories(_split(args.categories or []))
    if args.limit is not None and args.limit < 1:
        raise UserError("--limit must be a positive number")
    try:
        data_dir = bfcl_data_dir()
    except BfclDataError as exc:
        raise UserError(str(exc)) from exc
    missing = [category for category in categories if category not in category_files(data_dir)]
    if missing:  # checked before anything is written, so a failed import leaves no partial output
        raise UserError(
            f"{data_dir}: no data file for BFCL categor{'ies' if len(missing) > 1 else 'y'} "
            f"{', '.join(missing)}"
        )
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    for category in categories:
        try:
            outcomes = list(convert_category(data_dir, category))
        except BfclDataError as exc:
            raise UserError(str(exc)) from exc
        cases = [o.case for o in outcomes if o.case is not None][: args.limit]
        size = sample_size(args.sample, category)
        if size is not None and size < len(cases):
            # A string seed: Python's random seeds str deterministically across runs and machines.
            picked = random.Random(f"{args.seed}:{category}").sample(range(len(cases)), size)
            cases = [cases[i] for i in sorted(picked)]
        if args.out is not None:
            with (args.out / f"bfcl_{category}.jsonl").open("w", encoding="utf-8") as handle:
                _write_cases(cases, handle)
        else:
            _write_cases(cases, sys.stdout)
        _report(category, cases, outcomes)
        total += len(cases)
    where = f" into {args.out}" if args.out is not None else ""
    print(f"bfcl: {total} cases from {len(categories)} BFCL categories{where} ({data_dir})", file=sys.stderr)
    return 0


def run_requests(args: argparse.Namespace) -> int:
    from xpeval.evals.cases.requests import import_requests

    imported = import_requests(args.file, args.out, prefix=args.prefix, strict=args.strict)
    for refusal in imported.refused:
        print(f"requests: refused {refusal}", file=sys.stderr)
    refused = len(imported.refused)
    if not imported.files:
        why = "--strict" if imported.cases else "no line is a request a case can carry"
        raise UserError(
            f"{args.file}: nothing written ({why}): {refused} line(s) refused, "
            f"{imported.cases} would be cases"
        )
    where = ", ".join(str(path) for path in imported.files)
    print(
        f"requests: {imported.cases} unlabelled cases into {where}; {refused} line(s) refused",
        file=sys.stderr,
    )
    ignored = ", ".join(f"{key} ({n})" for key, n in sorted(imported.ignored.items()))
    if ignored:
        print(f"requests: left to the run that plays them: {ignored}", file=sys.stderr)
    return 0


def sample_size(specs: list[str], category: str) -> int | None:
    """The --sample size for a BFCL category (`CATEGORY=N` wins over a bare `N`)."""
    general: int | None = None
    for spec in _split(specs):
        name, _, number = spec.rpartition("=")
        try:
            size = int(number)
        except ValueError:
            raise UserError(f"--sample {spec!r}: expected N or CATEGORY=N") from None
        if size < 1:
            raise UserError(f"--sample {spec!r}: N must be positive")
        if name == category:
            return size
        if not name:
            general = size
    return general


def _write_cases(cases: list[Case], handle: TextIO) -> None:
    for case in cases:
        handle.write(json.dumps(case.model_dump(mode="json"), ensure_ascii=False) + "\n")


def _report(category: str, cases: list[Case], outcomes: list[Converted]) -> None:
    from xpeval.evals.cases.bfcl import CATEGORY_MAP

    skipped = [o for o in outcomes if o.skipped is not None]
    print(
        f"bfcl: {category} -> {CATEGORY_MAP[category]}: {len(cases)} cases, {len(skipped)} skipped",
        file=sys.stderr,
    )
    for outcome in skipped:
        print(f"bfcl:   skipped {outcome.skipped}", file=sys.stderr)
