"""`xpeval adapters [--json]`: every registered adapter and the wire it resolves to."""

from __future__ import annotations

import argparse
import json
from typing import Any

from adapters.registry import ADAPTER_REGISTRY, WrapperEntry, effective_contract


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("adapters", help="list the registered adapters")
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.set_defaults(handler=run)


def adapter_rows() -> list[dict[str, Any]]:
    rows = []
    for adapter_id, entry in ADAPTER_REGISTRY.items():
        contract = effective_contract(adapter_id)
        rows.append(
            {
                "id": adapter_id,
                "kind": entry.kind,
                "wire": contract.wire,
                "contract_parent": entry.contract_parent if isinstance(entry, WrapperEntry) else None,
            }
        )
    return rows


def run(args: argparse.Namespace) -> int:
    rows = adapter_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "kind", "wire", "contract parent", "schema dialect", "description")
    for column in table.columns[:5]:
        column.no_wrap = True
    for row in rows:
        contract = effective_contract(row["id"])
        entry = ADAPTER_REGISTRY[row["id"]]
        table.add_row(
            row["id"],
            row["kind"],
            row["wire"],
            row["contract_parent"] or "-",
            contract.schema_dialect,
            entry.description,
        )
    Console().print(table)
    return 0
