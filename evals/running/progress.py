"""Progress of a long run on stderr: a rich bar with counts, pass rate and ETA."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from xpeval.evals.results.rows import ResultRow


class RichProgress:
    def __init__(self, total: int, *, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled
        self.correct = 0
        self.done = 0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            transient=False,
        )
        self._task = self._progress.add_task("episodes", total=total, status="")

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def advance(self, row: ResultRow) -> None:
        self.done += 1
        self.correct += bool(row.correct)
        self._progress.update(
            self._task,
            advance=1,
            status=f"{self.correct}/{self.done} correct, last: {row.adapter} {row.case_id}",
        )
