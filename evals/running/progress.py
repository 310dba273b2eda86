"""Progress of a long run on stderr: a rich bar with counts, pass rate and ETA."""

from __future__ import annotations

import sys
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


class ItemProgress:
    """Progress over items counted as they are done (cassettes checked, tools measured), on
    stderr: a rich bar on a terminal; elsewhere (CI logs) a plain line every twentieth of the
    way, so a long command is never silent and a log holds no bar frames.

    The instance is the callback a library function reports to: `bar(done, total, status)`.
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._console = Console(stderr=True)
        self._live = self._console.is_terminal
        self._progress = Progress(
            TextColumn(f"[bold]{what}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self._console,
            disable=not self._live,
        )
        self._task = self._progress.add_task(what, total=None, status="")

    def __enter__(self) -> ItemProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def __call__(self, done: int, total: int, status: str = "") -> None:
        if self._live:
            self._progress.update(self._task, completed=done, total=total, status=status)
        elif done == total or done % max(1, total // 20) == 0:
            print(f"{self.what}: {done}/{total}", file=sys.stderr, flush=True)
