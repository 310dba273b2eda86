"""Run results: one row per case x adapter x model x attempt, appended as they arrive.

The JSONL file is the run's memory. Rows are written by a writer thread, off the event loop,
each in one `write()` as soon as it is queued, and fsynced at most every `FSYNC_SECONDS` (and
when the run finishes). A process killed at any point keeps every row it wrote (the kernel
has them); a torn last line (killed mid-write) is dropped when the file is read; a row still
queued is lost with its episode's final state, so resuming plays that episode again. Restarting
the same run skips every episode that already has a final row: nothing is done twice and
nothing is duplicated. Only a machine crash can lose the last `FSYNC_SECONDS` of rows, and
those episodes are re-run too.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from xpeval.errors import UserError
from xpeval.evals.results.batch_records import (
    BatchAnswerKept,
    BatchIntent,
    BatchRecord,
    BatchSettled,
    BatchSubmitted,
)
from xpeval.evals.results.rows import (
    EpisodeKey,
    ResultRow,
    RunHeader,
    RunTrailer,
    now_iso,
)
from xpeval.evals.results.run_plan import PlannedKey


class NotAResultsFileError(UserError):
    """A file that is not an xpeval results file at all (empty, foreign, corrupt)."""


class IncompleteRunError(UserError):
    """A results file of a run that did not finish: nothing about it can pass."""


def _parse_lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Parsed JSON lines and the byte length of the file's intact prefix.

    Only the last line may be torn (a kill mid-write leaves no newline at its end); a line
    that is not a JSON object anywhere else means the file is not ours.
    """
    data = path.read_bytes()
    if not data.strip():
        raise NotAResultsFileError(f"{path}: empty, not an xpeval results file")
    records: list[dict[str, Any]] = []
    intact = 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        if not line.endswith(b"\n"):
            break  # torn last write
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise NotAResultsFileError(
                f"{path}: line {number} is not a JSON object: not an xpeval results file"
            )
        records.append(value)
        intact += len(line)
    if not records or records[0].get("type") != "run":
        raise NotAResultsFileError(f"{path}: no run header on its first line: not an xpeval results file")
    return records, intact


FSYNC_SECONDS = 0.5
"""At most this long between a row's write and its fsync (a machine crash loses no more)."""


class _Writer:
    """Appends lines to a file from a thread: each line in one write() as soon as it is
    queued, an fsync at most every `FSYNC_SECONDS`, and on `close()`."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lines: queue.Queue[bytes | threading.Event | None] = queue.Queue()
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="xpeval-results", daemon=True)
        self._thread.start()

    def put(self, line: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._lines.put(line)

    def sync(self) -> None:
        """Return once everything queued so far is written and fsynced (a batch's record must
        be on disk before the step that depends on it)."""
        done = threading.Event()
        self._lines.put(done)
        done.wait()
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        """Write everything queued, fsync, close; raises what writing met."""
        self._lines.put(None)
        self._thread.join()
        os.close(self._fd)
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        synced = time.monotonic()
        dirty = False
        while True:
            try:
                line = self._lines.get(timeout=FSYNC_SECONDS)
            except queue.Empty:
                line = b""
            if line is None:
                break
            if isinstance(line, threading.Event):
                try:
                    os.fsync(self._fd)
                    synced, dirty = time.monotonic(), False
                except OSError as exc:
                    self._error = exc
                line.set()
                if self._error is not None:
                    return
                continue
            try:
                if line:
                    _write_all(self._fd, line)
                    dirty = True
                if dirty and time.monotonic() - synced >= FSYNC_SECONDS:
                    os.fsync(self._fd)
                    synced, dirty = time.monotonic(), False
            except OSError as exc:  # a full disk: the run learns it at its next row
                self._error = exc
                return
        try:
            os.fsync(self._fd)
        except OSError as exc:
            self._error = exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class ResultsFile:
    """An append-only JSONL results file for one run.

    While writing, only an index is kept in memory (which episodes have a final row, how many
    attempts each had): rows go to the file, and readers load what they need from it
    (`xpeval.evals.results.load`). `read()` parses every row, for tools that want them all.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: RunHeader | None = None
        self.rows: list[ResultRow] = []
        """The rows parsed by `read()` (rows appended since are in the file, not here)."""
        self.complete = False
        self.batches: list[BatchRecord] = []
        """The batch records so far (a `--batch` run's: `xpeval.evals.results.batch_records`)."""
        self._finals: set[EpisodeKey] = set()
        self._attempts: dict[EpisodeKey, int] = {}
        self._writer: _Writer | None = None

    @classmethod
    def read(cls, path: Path) -> ResultsFile:
        """Load a results file (torn last line dropped); NotAResultsFileError when it is not one."""
        if not path.is_file():
            raise NotAResultsFileError(f"{path}: no results file (run `xpeval run` first)")
        results = cls(path)
        records, _ = _parse_lines(path)
        try:
            for record in records:
                kind = record.get("type")
                if kind == "run":
                    if results.header is not None:
                        raise NotAResultsFileError(f"{path}: two run headers: not one run's results")
                    results.header = RunHeader.model_validate(record)
                elif kind == "result":
                    row = ResultRow.model_validate(record)
                    results.rows.append(row)
                    results._index(row)
                elif kind == "complete":
                    results.complete = True
                elif kind in _BATCH_RECORDS:
                    results.batches.append(_BATCH_RECORDS[kind].model_validate(record))
                else:
                    raise NotAResultsFileError(f"{path}: a line of unknown type {kind!r}")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise NotAResultsFileError(
                f"{path}: not an xpeval results file: {where}: {first['msg']}"
            ) from exc
        return results

    @classmethod
    def open_for(cls, path: Path, header: RunHeader) -> ResultsFile:
        """The file to write `header`'s run into: the same unfinished run resumes; anything
        else is moved aside to `<name>.prev` and a new file is started."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            try:
                existing: ResultsFile | None = cls.read(path)
            except NotAResultsFileError:
                existing = None
            if (
                existing is not None
                and existing.header is not None
                and existing.header.fingerprint == header.fingerprint
                and not existing.complete
            ):
                _, intact = _parse_lines(path)
                with path.open("r+b") as handle:  # drop a torn tail before appending
                    handle.truncate(intact)
                existing._writer = _Writer(path)
                return existing
            os.replace(path, path.with_name(path.name + ".prev"))
        results = cls(path)
        results.header = header
        results._writer = _Writer(path)
        results._append(header.model_dump(mode="json"))
        return results

    @property
    def run_id(self) -> str:
        assert self.header is not None, "results file has no run header"
        return self.header.run

    def final_keys(self) -> set[EpisodeKey]:
        return set(self._finals)

    def attempts(self, key: EpisodeKey) -> int:
        return self._attempts.get(key, 0)

    def missing(self) -> list[PlannedKey]:
        """Planned episodes without a final row (a planned model of None: any model's row)."""
        assert self.header is not None and self.header.plan is not None
        return missing_episodes(self.header.plan.keys(), self._finals)

    def check_complete(self) -> None:
        """IncompleteRunError, in one line, unless the run finished and every planned episode has
        its final row. A resumed run that then finished is complete."""
        check_complete(self.path, self.header, self.complete, self._finals)

    def append(self, row: ResultRow) -> None:
        self._index(row)
        self._append(row.model_dump(mode="json"))

    def append_batch(self, record: BatchRecord, *, sync: bool = True) -> None:
        """A batch record, on disk (fsynced) when this returns (`sync=False`: with the next
        record that is, the file being written in order)."""
        self.batches.append(record)
        self._append(record.model_dump(mode="json"))
        assert self._writer is not None
        if sync:
            self._writer.sync()

    def _index(self, row: ResultRow) -> None:
        key = row.key
        self._attempts[key] = max(self._attempts.get(key, 0), row.attempt)
        if row.final:
            self._finals.add(key)

    def finish(self) -> None:
        """The completion record, then everything written and fsynced."""
        assert self.header is not None
        rows = sum(self._attempts.values())
        self._append(RunTrailer(run=self.header.run, finished_at=now_iso(), rows=rows).model_dump())
        self.close()
        self.complete = True

    def close(self) -> None:
        """Write what is queued and release the file (an interrupted run can still resume)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def _append(self, record: dict[str, Any]) -> None:
        assert self._writer is not None, "the results file is not open for writing"
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._writer.put(line.encode("utf-8"))


_BATCH_RECORDS: dict[str, type[BatchRecord]] = {
    "batch": BatchIntent,
    "batch_submitted": BatchSubmitted,
    "batch_settled": BatchSettled,
    "batch_answer": BatchAnswerKept,
}


def missing_episodes(plan: Iterable[PlannedKey], finals: set[EpisodeKey]) -> list[PlannedKey]:
    any_model = {(case_id, adapter) for case_id, adapter, _ in finals}
    return [
        planned
        for planned in plan
        if not (planned in finals if planned[2] is not None else (planned[0], planned[1]) in any_model)
    ]


def check_complete(path: Path, header: RunHeader | None, complete: bool, finals: set[EpisodeKey]) -> None:
    """IncompleteRunError, in one line, unless the run finished and every planned episode has
    its final row."""
    keys = header.plan.keys() if header is not None and header.plan is not None else []
    planned = len(keys)
    if not complete:
        raise IncompleteRunError(
            f"{path}: the run did not finish (no completion record; {len(finals)} of "
            f"{planned or '?'} episodes done): start the same `xpeval run` again to resume it"
        )
    if not keys:
        raise IncompleteRunError(f"{path}: the run records no plan, so it cannot be judged complete")
    missing = missing_episodes(keys, finals)
    if missing:
        shown = ", ".join("/".join(str(part) for part in key if part) for key in missing[:3])
        raise IncompleteRunError(
            f"{path}: {len(missing)} of {planned} planned episodes have no result ({shown}"
            f"{', ...' if len(missing) > 3 else ''})"
        )


def final_results(rows: Iterable[ResultRow]) -> Iterator[ResultRow]:
    """The final attempt of every episode, in first-seen order."""
    finals: dict[EpisodeKey, ResultRow] = {}
    for row in rows:
        if row.final:
            finals[row.key] = row
    yield from finals.values()
