"""Progress of a long run on stderr: a rich bar with counts, pass rate and ETA on a terminal;
elsewhere (CI logs, pipes) a plain line at a steady pace, so a long command is never silent and a
log holds no bar frames."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
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


class PlainPace:
    """When a log that is not a terminal gets a progress line: at every tenth of the way, at
    least every `seconds` while items complete, and at the end."""

    def __init__(self, *, seconds: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds = seconds
        self._clock = clock
        self._last_time = clock()
        self._last_tenth = 0

    def due(self, done: int, total: int) -> bool:
        now = self._clock()
        tenth = done * 10 // total if total > 0 else 0
        if done == total or tenth > self._last_tenth or now - self._last_time >= self._seconds:
            self._last_time, self._last_tenth = now, tenth
            return True
        return False


class RichProgress:
    """A run's progress over its episodes: `enabled=False` (`--no-progress`) is silent."""

    def __init__(self, total: int, *, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled
        self.correct = 0
        self.done = 0
        console = Console(stderr=True)
        self._plain = PlainPace() if enabled and not console.is_terminal else None
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled or self._plain is not None,
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
        if self._plain is not None:
            if self._plain.due(self.done, self.total):
                line = f"episodes: {self.done}/{self.total}, {self.correct} correct"
                print(line, file=sys.stderr, flush=True)
            return
        self._progress.update(
            self._task,
            advance=1,
            status=f"{self.correct}/{self.done} correct, last: {row.adapter} {row.case_id}",
        )


class ItemProgress:
    """Progress over items counted as they are done (cassettes checked, tools measured), on
    stderr: a rich bar on a terminal; elsewhere (CI logs) a plain line at `PlainPace`'s pace.

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
        self._pace = PlainPace()

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
        elif self._pace.due(done, total):
            print(f"{self.what}: {done}/{total}", file=sys.stderr, flush=True)
