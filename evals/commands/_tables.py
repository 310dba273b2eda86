"""How every command prints a table: rich, at a width that keeps each column whole.

Piped or captured output (CI logs, `| less`, a test) has no terminal width, and rich then
assumes 80 columns and elides ids and wire names to `openai-respon…`; a table there gets the
width it needs. In a terminal, the identifying columns (ids, wires) keep their full width and
only free text wraps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

PIPED_WIDTH = 200


def print_table(table: Table, *, whole: int = 0) -> None:
    """Print `table` to stdout; its first `whole` columns are never wrapped or elided."""
    for column in table.columns[:whole]:
        cells = [str(cell) for cell in column.cells]
        column.no_wrap = True
        column.min_width = max([len(str(column.header)), *map(len, cells)])
    table_console().print(table)


def table_console() -> Console:
    """stdout as rich prints tables to it: the terminal's width, or PIPED_WIDTH when piped."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=PIPED_WIDTH)
