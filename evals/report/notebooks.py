"""Execute the report notebooks top to bottom with nbclient; a failing cell fails the whole.

    python -m xpeval.evals.report.notebooks --reports reports --out reports/notebooks notebooks/*.ipynb

`nox -s report` runs exactly this, and the tests call `execute_notebook` on a small run. The
notebooks find their input through `XPEVAL_REPORTS` (and `XPEVAL_HISTORY` for the history
notebook), passed to the kernel's environment.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CELL_TIMEOUT = 600
"""Seconds a cell may run (the scorecard of a million-episode run takes seconds, not minutes)."""


class NotebookError(RuntimeError):
    """A cell failed: its notebook, the cell's number and the error it raised."""


def execute_notebook(
    path: Path,
    *,
    out: Path | None = None,
    environment: Mapping[str, str] | None = None,
    timeout: int = CELL_TIMEOUT,
) -> Any:
    """The notebook executed in a fresh `python3` kernel, from its own folder (so relative paths
    mean the same as in Jupyter), with `environment` added to this process's; written to `out`
    with its outputs when given. NotebookError when a cell raises."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.resolve().parent)}},
    )
    try:
        # `env` reaches the kernel's launch (jupyter_client's provisioner): no global state changes.
        client.execute(env={**os.environ, **(environment or {})})
    except CellExecutionError as exc:
        raise NotebookError(f"{path}: a cell failed:\n{exc}") from exc
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, out)
    return notebook


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m xpeval.evals.report.notebooks", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("notebooks", type=Path, nargs="+")
    parser.add_argument(
        "--reports", type=Path, default=Path("reports"), help="XPEVAL_REPORTS for the notebooks"
    )
    parser.add_argument("--history", type=Path, help="XPEVAL_HISTORY for the notebooks")
    parser.add_argument("--out", type=Path, help="folder for the executed notebooks (default: not written)")
    args = parser.parse_args(argv)
    environment = {"XPEVAL_REPORTS": str(args.reports.resolve())}
    if args.history is not None:
        environment["XPEVAL_HISTORY"] = str(args.history.resolve())
    for notebook in args.notebooks:
        out = args.out / notebook.name if args.out is not None else None
        try:
            execute_notebook(notebook, out=out, environment=environment)
        except NotebookError as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"executed {notebook}" + (f" -> {out}" if out else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
