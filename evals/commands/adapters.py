"""`xpeval adapters [--capabilities] [--json]`: every registered adapter, the wire it resolves
to, the distribution it comes from (`xpeval` for the built-in ones), and what it supports (the
capability matrix its registry entries declare). Refused plugins are named on stderr, as after
every command that loaded the registry (`xpeval.evals.cli`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

SUMMARY = "list the registered adapters"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("adapters", help=SUMMARY)
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.add_argument(
        "--capabilities",
        action="store_true",
        help="the capability matrix: tool_choice modes, parallel calls, streamed calls, strict schemas, "
        "the reasoning state each keeps and sends back, the call ids it takes in a handoff and what it "
        "keeps, converts or drops of another provider's history, dialect",
    )
    parser.set_defaults(handler=run)


def capability_rows() -> list[dict[str, Any]]:
    """One row per adapter: what its registry entry (or the nearest parent's) declares."""
    from xpeval.adapters.registry import ADAPTER_REGISTRY, effective_contract
    from xpeval.adapters.wires.handoff import declared_behaviour
    from xpeval.adapters.wires.handoff_ids import FORMATS
    from xpeval.evals.handoff.switch import party_of

    rows = []
    for adapter_id in ADAPTER_REGISTRY:
        contract = effective_contract(adapter_id)
        call_ids = FORMATS.get(contract.wire)
        rows.append(
            {
                "id": adapter_id,
                "wire": contract.wire,
                "schema_dialect": contract.schema_dialect,
                **contract.capabilities.row(),
                "handoff_call_ids": call_ids.pattern.pattern if call_ids else None,
                "handoff": declared_behaviour(party_of(adapter_id)),
            }
        )
    return rows


_EVERY_ADAPTER = ("call ids", "signed state", "reasoning text")
"""Handoff behaviours every adapter shares (in the JSON): the table shows the others."""


def _show_capabilities(as_json: bool) -> int:
    rows = capability_rows()
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.markup import escape
    from rich.table import Table

    from xpeval.evals.commands._tables import print_table

    modes = ["auto", "none", "required", "named"]
    table = Table(
        "id",
        "wire",
        "dialect",
        *modes,
        "parallel",
        "streamed",
        "strict",
        "reasoning state",
        "call ids taken (handoff)",
        "foreign history (handoff)",
        title="What each adapter supports: tool_choice modes, parallel calls, streamed tool calls, strict "
        "schemas, the reasoning state it sends back between turns (declared in the registry, checked by "
        "the conformance suite), the call ids a conversation handed to it is given and what another "
        "provider's history gets beyond its ids and its signed state dropped (docs/provider-loop-rules.md, "
        "Handoff)",
    )
    for row in rows:
        table.add_row(
            row["id"],
            row["wire"],
            row["schema_dialect"],
            *("yes" if m in row["tool_choice"] else "no" for m in modes),
            *("yes" if row[k] else "no" for k in ("parallel_calls", "streamed_tool_calls", "strict_schemas")),
            ", ".join(row["reasoning_state"]) or "-",
            escape(row["handoff_call_ids"] or "kept as they are"),  # a pattern's [...] is not markup
            "\n".join(
                f"{what}: {action.split(' (')[0]}"
                for what, action in row["handoff"].items()
                if what not in _EVERY_ADAPTER
            ),
        )
    call_ids = table.columns[-2]  # a pattern cut short says nothing: never elided
    call_ids.no_wrap = True
    call_ids.min_width = max(len(str(cell)) for cell in call_ids.cells)
    print_table(table, whole=3)
    return 0


def adapter_rows() -> list[dict[str, Any]]:
    from xpeval.adapters.registry import ADAPTER_REGISTRY, WrapperEntry, distribution_of, effective_contract

    rows = []
    for adapter_id, entry in ADAPTER_REGISTRY.items():
        contract = effective_contract(adapter_id)
        rows.append(
            {
                "id": adapter_id,
                "kind": entry.kind,
                "wire": contract.wire,
                "contract_parent": entry.contract_parent if isinstance(entry, WrapperEntry) else None,
                "distribution": distribution_of(adapter_id),
            }
        )
    return rows


def run(args: argparse.Namespace) -> int:
    from xpeval.adapters.registry import ADAPTER_REGISTRY, effective_contract

    if args.capabilities:
        return _show_capabilities(args.json)
    rows = adapter_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.table import Table

    from xpeval.evals.commands._tables import print_table

    table = Table("id", "kind", "wire", "contract parent", "schema dialect", "from", "description")
    for row in rows:
        contract = effective_contract(row["id"])
        entry = ADAPTER_REGISTRY[row["id"]]
        table.add_row(
            row["id"],
            row["kind"],
            row["wire"],
            row["contract_parent"] or "-",
            contract.schema_dialect,
            row["distribution"],
            entry.description,
        )
    print_table(table, whole=6)
    return 0
