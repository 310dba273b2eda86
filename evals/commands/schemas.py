"""`xpeval schemas [--tools PATH ...] [--mcp SERVER ...] [--corpus DIR] [--fail-on OUTCOME] [--json]`:
schema acceptance per tool and adapter.

Every registered adapter (or the ones named) x every tool: the verdict (as-is / rewritten /
refused), the losses the pass reported, the rules the sent definition still breaks, and the
fidelity of the rewrite. Tools come from files in the common forms (`--tools`, see
`xpeval.evals.acceptance.sources.tool_files` and docs/tools-input.md), from live MCP servers (`--mcp`, see
`xpeval.evals.acceptance.sources.mcp_server`), or from a folder of xpeval's own tool files (`--corpus`,
the default: the
built-in schema set). `--json` prints one line per pair; otherwise a tool x adapter table, the
per-adapter summary and reports/schema_acceptance.{csv,md}.

Exit status: 0; 1 when `--fail-on` names an outcome some pair has (each such pair is printed);
2 for an input error (a file or server that cannot be read, an unknown adapter).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from xpeval.errors import UserError
from xpeval.evals.acceptance.outcomes import OUTCOME_LABELS, outcome_legend


def _outcomes(text: str) -> list[str]:
    from xpeval.evals.acceptance.table import OUTCOMES

    named = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [part for part in named if part not in OUTCOMES]
    if unknown or not named:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or repr(text)}: not an outcome (one of: {', '.join(OUTCOMES)})"
        )
    return named


SUMMARY = "schema acceptance: every adapter x every tool of files, MCP servers or a corpus (offline)"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    from xpeval.evals.acceptance.fidelity import DEFAULT_EXAMPLES, DEFAULT_SECONDS
    from xpeval.evals.acceptance.sources.mcp_server import DEFAULT_TIMEOUT

    parser = subparsers.add_parser("schemas", help=SUMMARY)
    parser.add_argument(
        "--tools",
        type=Path,
        nargs="+",
        action="extend",
        metavar="PATH",
        help="tool files or folders: xpeval's own form, OpenAI Chat or Responses tools, Anthropic tools, "
        "an MCP tools/list result, or a JSON list of these (docs/tools-input.md)",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        metavar="SERVER",
        help="an MCP server: a command line to start it on stdio ('npx -y @scope/server'), or the URL of "
        "its streamable HTTP endpoint; repeatable",
    )
    parser.add_argument(
        "--mcp-timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="per server, for starting it, the handshake and every tools/list page",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="folder of tool schema files (default, without --tools or --mcp: the built-in set)",
    )
    parser.add_argument(
        "--adapters",
        nargs="+",
        metavar="ID",
        help="adapter ids (default: [tool.xpeval] adapters, else every registered adapter)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON line per (adapter, tool)")
    parser.add_argument(
        "--fail-on",
        type=_outcomes,
        action="append",
        metavar="OUTCOME",
        help="exit 1 when a pair is 'refused' (also: sent with a provider rule broken), or sent with a "
        "'loss' (a reported loss that changes what a call may contain), or with a loss of one severity: "
        "'validation' (what a validator accepts) or 'guidance' (only what the model is told); "
        "repeatable or comma-separated",
    )
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
    parser.add_argument(
        "--per-tool",
        action="store_true",
        help=f"print the tool x adapter table also for more than {PER_TOOL_ROWS} tools (it is always in "
        "the written md)",
    )
    parser.add_argument(
        "--reports", type=Path, default=None, help="where the csv/md go (default: [tool.xpeval] reports)"
    )
    parser.set_defaults(handler=run, uses_project=True)


def selected_adapters(requested: list[str] | None) -> list[str]:
    """The adapters to measure, from the registry; an unknown id fails with `Unknown adapter`."""
    from xpeval.adapters.registry import adapter_ids, get_entry

    if not requested:
        return adapter_ids()
    ids = [part.strip() for item in requested for part in item.split(",") if part.strip()]
    for adapter_id in ids:
        get_entry(adapter_id)
    return list(dict.fromkeys(ids))


def _read_sources(args: argparse.Namespace) -> tuple[list[Any], str]:
    """Every tool to measure and a label of where they came from; `ToolsInputError` (exit 2)
    for anything that cannot be read."""
    from xpeval.evals.acceptance.sources.mcp_server import read_mcp_tools
    from xpeval.evals.acceptance.sources.tool_files import (
        BUILTIN_CORPUS,
        ToolsInputError,
        duplicate_keys,
        read_tools,
        tool_files,
    )

    paths: list[Path] = list(args.tools or [])
    corpus: Path | None = args.corpus
    if corpus is None and not paths and not args.mcp:
        corpus = BUILTIN_CORPUS
    if corpus is not None:
        if not corpus.is_dir():
            raise UserError(f"Corpus folder not found: {corpus}")
        if not tool_files(corpus):
            raise UserError(f"No schema files (*.json) under {corpus}")
        paths.insert(0, corpus)
    if args.mcp and args.mcp_timeout <= 0:
        raise UserError("--mcp-timeout must be positive")
    read = read_tools(paths) if paths else None
    tools = list(read.tools) if read else []
    for skipped in read.skipped if read else []:
        print(f"xpeval: skipped {skipped}", file=sys.stderr)
    if args.mcp:
        tools += read_mcp_tools(args.mcp, timeout=args.mcp_timeout)
    problems = duplicate_keys(tools)
    if problems:
        raise ToolsInputError("\n".join(problems))
    labels = [str(path) for path in paths] + sorted({tool.source for tool in tools if tool.path is None})
    return tools, ", ".join(labels)


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.acceptance.measure import default_workers, measure_tools
    from xpeval.evals.project import project_settings
    from xpeval.evals.running.progress import ItemProgress

    project = project_settings()
    adapters = list(project.selected_adapters(args.adapters)) or selected_adapters(None)
    reports: Path = args.reports or project.reports
    if args.examples < 1 or args.seconds <= 0:
        raise UserError("--examples must be at least 1 and --seconds positive")
    fail_on = list(dict.fromkeys(outcome for group in args.fail_on or [] for outcome in group))
    tools, label = _read_sources(args)
    count = len(tools)
    with ItemProgress(f"schemas: tools x {len(adapters)} adapters") as progress:
        rows = measure_tools(
            tools,
            adapters,
            examples=args.examples,
            seconds=args.seconds,
            fidelity=not args.no_fidelity,
            workers=args.workers or default_workers(),
            on_schema=progress,
            definitions=args.json,  # only the JSON lines print them
        )
        # The workers fork when the first row is asked for. Forked from a command that holds no
        # tool (they read a file's tools themselves) and has not imported pandas (the table's,
        # not theirs), each maps about 140 MB less on 10,000 tools (benchmarks/schemas_at_scale.py).
        del tools
        first = next(rows, None)
        from xpeval.evals.acceptance.table import pairs_frame

        started = rows if first is None else itertools.chain([first], rows)
        pairs = pairs_frame(_streamed(started, echo=args.json))  # one flat record kept per pair
    if not args.json:
        _report(
            pairs,
            label,
            reports,
            measured_by=_command_line(args, adapters if args.adapters else None),
            per_tool=args.per_tool or count <= PER_TOOL_ROWS,
        )
    return _fail_on(pairs, fail_on)


def _command_line(args: argparse.Namespace, adapters: list[str] | None) -> str:
    """The `xpeval schemas` command that chose these tools and adapters, as a user would type it."""
    import shlex

    words = ["xpeval", "schemas"]
    if args.corpus is not None:
        words += ["--corpus", str(args.corpus)]
    if args.tools:
        words += ["--tools", *(str(path) for path in args.tools)]
    for server in args.mcp or []:
        words += ["--mcp", server]
    if adapters:
        words += ["--adapters", ",".join(adapters)]
    return shlex.join(words)


PER_TOOL_ROWS = 50
"""Above this many tools the console shows the per-adapter summary only (the md has every tool)."""


def _streamed(rows: Iterator[Any], *, echo: bool) -> Iterator[Any]:
    """`rows` as they come, each printed as a JSON line when `echo`; none is held here."""
    for row in rows:
        if echo:
            print(json.dumps(row.line(), ensure_ascii=False), flush=True)
        yield row


def _fail_on(pairs: Any, outcomes: list[Any]) -> int:
    """1 and every pair with a named outcome on stderr, else 0."""
    from xpeval.evals.acceptance.table import failing, refusal_text

    found = failing(pairs, outcomes)
    if found.empty:
        return 0
    print(
        f"xpeval: --fail-on {','.join(outcomes)}: {len(found)} pair(s) of "
        f"{found['schema'].nunique()} tool(s)",
        file=sys.stderr,
    )
    for record in found.itertuples(index=False):
        if record.outcome == "refused" and record.verdict != "refused":
            why = f"sent, but the provider refuses it: {record.violation_rules}"
        elif record.outcome == "refused":
            why = f"refused: {refusal_text(record)}"
        else:
            why = f"{record.lost} lost ({record.lost_keywords})"
            if record.outcome in ("validation", "guidance"):
                keywords = getattr(record, f"{record.outcome}_keywords")
                why = f"{getattr(record, f'{record.outcome}_lost')} {record.outcome} lost ({keywords})"
        print(f"  {record.schema} on {record.adapter}: {why}", file=sys.stderr)
    return 1


def _report(pairs: Any, label: str, directory: Path, *, measured_by: str, per_tool: bool = True) -> None:
    from rich.table import Table

    from xpeval.evals.acceptance.table import over_cap, summary, tool_matrix, write_acceptance_report
    from xpeval.evals.commands._tables import table_console

    console = table_console()
    matrix, notes = tool_matrix(pairs, short=True) if per_tool else (None, {})
    if matrix is None:
        tools = pairs["schema"].nunique()
        print(f"{tools} tools: the tool x adapter table is in the md below (--per-tool prints it)")
    elif not matrix.empty:
        rows = Table(title=f"Schema acceptance per tool - {label}")
        rows.add_column("tool", overflow="fold")
        for adapter in matrix.columns[1:]:
            # an id split at its first hyphen: ten adapters fit a wide terminal
            rows.add_column(str(adapter).replace("-", "-\n", 1), no_wrap=True)
        for record in matrix.itertuples(index=False):
            rows.add_row(*(_styled(str(value)) for value in record))
        console.print(rows)
        console.print(_LEGEND, markup=False, highlight=False)
        for reason, note in notes.items():
            console.print(f"{note}: {reason}", markup=False, highlight=False)
        if notes:
            console.print(f"{RULE_SOURCES} {_installed_root()}", markup=False, highlight=False)
    table = summary(pairs)
    view = Table(title=f"Schema acceptance - {label}", caption="offline: published rules, not live answers")
    shown = [column for column in _HEADERS if column in table.columns]
    for column in shown:
        view.add_column(_HEADERS[column], justify="left" if column == "adapter" else "right", no_wrap=True)
    for record in table[shown].itertuples(index=False):
        view.add_row(*(_cell(value) for value in record))
    console.print(view)
    console.print(f"tools per adapter - {outcome_legend()}", markup=False, highlight=False)
    capped = over_cap(table)
    if capped:
        print(f"xpeval: {capped}", file=sys.stderr)
    paths = write_acceptance_report(pairs, directory, label, measured_by=measured_by)
    print(f"wrote {paths['csv']} and {paths['md']}", file=sys.stderr)


RULE_SOURCES = "the rules' sources (docs/..., adapters/.../RULES.md) are files of the installed xpeval, under"


def _installed_root() -> str:
    from xpeval.adapters.schema.refusals import source_file

    return str(source_file(""))


_LEGEND = (
    "rewritten: changed in form only; N lost: rewritten with N reported losses that change what a "
    "validator accepts (a validation loss); M guidance: losses that change only what the model is told "
    "(a guidance loss); violates N: sent "
    "with N provider rules broken; refused Rn: not sent, the reason below"
)

_HEADERS = {
    "adapter": "adapter", "pairs": "tools", **OUTCOME_LABELS,
    "losses": "losses", "mean_loss_rate": "loss",
    "false_rejections": "false rej", "silent_changes": "silent",
    "tools_per_request": "cap", "requests_needed": "requests",
}  # fmt: skip
"""The console shows these; the csv/md have every column. The outcome counts carry the words of
`xpeval.evals.acceptance.outcomes`, as the md and the HTML report do."""


def _styled(text: str) -> Any:
    from rich.text import Text

    if text.startswith("refused"):
        return Text(text, style="red")
    if "lost" in text:
        return Text(text, style="yellow")
    return Text(text, style="green" if text in ("as-is", "rewritten") else "")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if value != value else f"{value:.2f}"
    return str(value)


def ensure_default_report(
    reports_dir: Path, *, log: Callable[[str], None] | None = None
) -> tuple[Path, bool]:
    """reports/schema_acceptance.{csv,md} for every adapter over the project's own schema set
    (what `xpeval run` adds to its scorecard), measured only when the corpus, the measuring code,
    the adapters or the settings changed since the report there was written (`xpeval.evals.acceptance.cache`).
    Returns the md path and whether it was measured now."""
    from xpeval.evals.acceptance.cache import ensure_report
    from xpeval.evals.acceptance.sources.tool_files import BUILTIN_CORPUS

    return ensure_report(reports_dir, BUILTIN_CORPUS, log=log)


def write_default_report(directory: Path) -> Path | None:
    """The md path of the default report, measured again only when it is out of date."""
    return ensure_default_report(directory)[0]
