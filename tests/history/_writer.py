"""A process appending runs to a history store, for the concurrency and kill tests.

    python -m tests.history._writer STORE PREFIX COUNT ROWS

appends COUNT runs `PREFIX-0`, `PREFIX-1`, ... of ROWS episodes each, over three dates.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from tests.history._runs import bulk
from xpeval.evals.results.history import append


def main(store: str, prefix: str, count: str, rows: str) -> None:
    template = bulk(f"{prefix}-0", int(rows))
    for index in range(int(count)):
        run_id = f"{prefix}-{index}"
        header = template.header.model_copy(
            update={"run": run_id, "started_at": f"2026-12-0{1 + index % 3}T03:00:00+00:00"}
        )
        append(Path(store), replace(template, header=header), kind="nightly", passed=index % 2 == 0)
        print(run_id, flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
