"""Load a run's results for judging and reporting: only the columns and the final rows needed.

A results file can hold millions of rows (a nightly over many adapters, models and repeated
trials). Reading it row by row into pydantic models took 83-99 s and 10.8 GB for a million
rows; this reads it with pyarrow's JSON reader against an explicit schema (nested fields like
`calls` are never materialized), keeps each episode's final attempt, and hands pandas a
columnar table. pyarrow is already a dependency (Parquet); DuckDB or polars would add a second
engine for the same job.

    run = load_run(Path("reports/results.jsonl"))
    run.check_complete()            # IncompleteRunError unless the run finished whole
    run.frame                       # one row per episode, the columns of FRAME_COLUMNS
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from xpeval.evals.results.batch_records import BATCH_RECORD_TYPES
from xpeval.evals.results.file import IncompleteRunError, NotAResultsFileError, check_complete
from xpeval.evals.results.rows import MAX_ROW_BYTES, EpisodeKey, RunHeader
from xpeval.evals.results.run_plan import TRIAL_MARK

_COLUMNS: dict[str, pa.DataType] = {
    "type": pa.string(),
    "run": pa.string(),
    "case_id": pa.string(),
    "trial": pa.int64(),
    "category": pa.string(),
    "adapter": pa.string(),
    "wire": pa.string(),
    "model": pa.string(),
    "attempt": pa.int64(),
    "final": pa.bool_(),
    "source": pa.string(),
    "recorded_at": pa.string(),
    "correct": pa.bool_(),
    "tool_selection_correct": pa.bool_(),
    "arguments_correct": pa.bool_(),
    "irrelevance": pa.bool_(),
    "malformed": pa.bool_(),
    "schema_valid": pa.bool_(),
    "reason": pa.string(),
    "error_kind": pa.string(),
    "error_type": pa.string(),
    "latency_s": pa.float64(),
    "input_tokens": pa.int64(),
    "output_tokens": pa.int64(),
    "cost_usd": pa.float64(),
    "steps": pa.int64(),
    "started_at": pa.string(),
}
SCHEMA = pa.schema([pa.field(name, kind) for name, kind in _COLUMNS.items()])

FRAME_COLUMNS = [
    "run", "case_id", "trial", "category", "adapter", "wire", "model", "source", "recorded_at", "attempts",
    "correct", "tool_selection_correct", "arguments_correct", "irrelevance", "malformed", "schema_valid",
    "error", "error_kind", "error_type", "reason", "latency_s", "input_tokens", "output_tokens", "cost_usd",
    "steps",
]  # fmt: skip
"""The tidy table: one row per episode (its final attempt)."""
FRAME_TYPES: dict[str, pa.DataType] = {
    name: _COLUMNS.get(name, pa.int64() if name == "attempts" else pa.bool_()) for name in FRAME_COLUMNS
}
"""Each tidy column's arrow type: a results row's own, or what it is derived into (`attempts`
counts attempts, `error` is whether the episode ended in one)."""

NULLABLE_VERDICTS = ("correct", "tool_selection_correct", "arguments_correct", "schema_valid")
"""Verdict columns that may be None (not judged): kept as Python objects, never cast to bool."""

BLOCK_BYTES = 2 * MAX_ROW_BYTES
"""pyarrow's JSON block size: a line must fit in one block, and the writer keeps every row
within `MAX_ROW_BYTES` (`xpeval.evals.results.rows.bounded`), so any row it writes reads back."""


@dataclass
class LoadedRun:
    path: Path
    header: RunHeader
    complete: bool
    frame: pd.DataFrame
    """One row per episode (its final attempt), the columns of FRAME_COLUMNS."""

    def check_complete(self) -> None:
        """IncompleteRunError, in one line, unless the run finished and every planned episode
        has its final row (checked per adapter and model, column-wise)."""
        plan = self.header.plan
        if not self.complete:
            planned = sum(len(plan.cases_of(a)) * len(m) for a, m in plan.models.items()) if plan else "?"
            raise IncompleteRunError(
                f"{self.path}: the run did not finish (no completion record; {len(self.frame)} of "
                f"{planned} episodes done): start the same `xpeval run` again to resume it"
            )
        if plan is None:
            check_complete(self.path, self.header, self.complete, set())
            return
        missing: list[EpisodeKey] = []
        count = 0
        done = self.frame.assign(episode=episode_ids(self.frame))[["episode", "adapter", "model"]]
        for adapter_id, models in plan.models.items():
            planned = pd.Index(plan.cases_of(adapter_id))
            mine = done[done["adapter"] == adapter_id]
            for model in models:
                have = mine["episode"] if model is None else mine.loc[mine["model"] == model, "episode"]
                absent = planned.difference(pd.Index(have.unique()))
                count += len(absent)
                missing.extend((str(c), adapter_id, str(model)) for c in absent[: 3 - len(missing)])
        if count:
            total = sum(len(plan.cases_of(a)) * len(m) for a, m in plan.models.items())
            shown = ", ".join("/".join(key) for key in missing)
            raise IncompleteRunError(
                f"{self.path}: {count} of {total} planned episodes have no result ({shown}"
                f"{', ...' if count > 3 else ''})"
            )


class _Slice(io.RawIOBase):
    """Bytes `start` to `end` of a file, read as a stream (pyarrow reads it block by block)."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self._file = path.open("rb")
        self._file.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = min(len(buffer), self._left)
        if size <= 0:
            return 0
        read = self._file.readinto(memoryview(buffer)[:size])
        self._left -= read or 0
        return read or 0

    def close(self) -> None:
        self._file.close()
        super().close()


def _intact_end(path: Path) -> int:
    """The byte length of the file's complete lines (a kill mid-write tears only the last)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        position = size
        while position > 0:
            step = min(1 << 16, position)
            handle.seek(position - step)
            chunk = handle.read(step)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                return position - step + newline + 1
            position -= step
    return 0


def _header(path: Path) -> tuple[RunHeader, int]:
    """The run header on the first line, and where the rows start."""
    with path.open("rb") as handle:
        first = handle.readline()
    if not first.strip():
        raise NotAResultsFileError(f"{path}: empty, not an xpeval results file")
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get("type") != "run":
        raise NotAResultsFileError(f"{path}: no run header on its first line: not an xpeval results file")
    try:
        return RunHeader.model_validate(record), len(first)
    except ValueError as exc:
        raise NotAResultsFileError(f"{path}: its run header is not an xpeval run header: {exc}") from exc


_KNOWN_TYPES = ("result", "complete", *BATCH_RECORD_TYPES)
"""The lines after the header: rows, the completion record, and a `--batch` run's batch records
(which this reader, reading rows, skips)."""

REQUIRED = (
    "run",
    "case_id",
    "category",
    "adapter",
    "wire",
    "model",
    "attempt",
    "final",
    "source",
    "irrelevance",
    "malformed",
    "latency_s",
    "started_at",
)


def _final_rows(path: Path, start: int, end: int) -> tuple[pa.Table, bool]:
    """Every final result row (the frame's columns only), and whether the completion record is
    there; batch by batch, so the file is never in memory whole."""
    options = pajson.ParseOptions(explicit_schema=SCHEMA, unexpected_field_behavior="ignore")
    kept: list[pa.RecordBatch] = []
    complete = False
    with io.BufferedReader(_Slice(path, start, end), buffer_size=1 << 20) as stream:
        try:
            # One thread: with pyarrow's readahead a refused file could leave a reader thread
            # calling into the Python stream while the interpreter exits, and the process then
            # died with "terminate called without an active exception" after its one-line
            # error (seen 1 in 30 `xpeval gate` runs of a corrupt file on a loaded machine).
            read_options = pajson.ReadOptions(block_size=BLOCK_BYTES, use_threads=False)
            reader = pajson.open_json(stream, read_options=read_options, parse_options=options)
            for batch in reader:
                kinds = batch.column("type")
                strange = [k for k in pc.unique(kinds).to_pylist() if k not in _KNOWN_TYPES]
                if strange:
                    raise NotAResultsFileError(
                        f"{path}: a line of unknown type {strange[0]!r}: not an xpeval results file"
                    )
                complete = complete or bool(pc.any(pc.equal(kinds, "complete")).as_py())
                results = batch.filter(pc.equal(kinds, "result"))
                _check_required(results, path)
                kept.append(results.filter(pc.equal(results.column("final"), True)))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            if "Empty JSON file" in str(exc):
                return pa.Table.from_batches([], schema=SCHEMA), False
            reason = str(exc).splitlines()[0]
            raise NotAResultsFileError(f"{path}: not an xpeval results file: {reason}") from exc
    return pa.Table.from_batches(kept, schema=SCHEMA), complete


def _check_required(results: pa.RecordBatch, path: Path) -> None:
    """A result line missing a field every row has is not one of ours (or was cut short)."""
    for name in REQUIRED:
        if results.column(name).null_count:
            raise NotAResultsFileError(f"{path}: a result line has no {name!r}: not an xpeval results file")


def load_run(path: Path) -> LoadedRun:
    """A run's header, whether it completed, and its final rows as a tidy frame."""
    path = Path(path)
    if not path.is_file():
        raise NotAResultsFileError(f"{path}: no results file (run `xpeval run` first)")
    header, start = _header(path)
    table, complete = _final_rows(path, start, max(start, _intact_end(path)))
    frame = frame_of(table)
    del table
    pa.default_memory_pool().release_unused()  # the read's buffers, freed, go back to the system
    return LoadedRun(path=path, header=header, complete=complete, frame=frame)


def frame_of(results: pa.Table) -> pd.DataFrame:
    """The tidy frame of final result rows (the last final row wins for an episode seen twice)."""
    frame = results.select([c for c in _COLUMNS if c not in ("type", "final", "started_at")]).to_pandas()
    frame["trial"] = frame["trial"].fillna(0).astype("int64")  # files written before --repeat existed
    frame = frame.drop_duplicates(["case_id", "trial", "adapter", "model"], keep="last")
    frame = frame.rename(columns={"attempt": "attempts"})
    frame["error"] = frame["error_kind"].notna()
    for column in ("input_tokens", "output_tokens"):
        frame[column] = frame[column].astype("Int64")
    for column in NULLABLE_VERDICTS:  # True, False or None (not judged), whatever arrow inferred
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame[FRAME_COLUMNS].reset_index(drop=True)


def episode_ids(frame: pd.DataFrame) -> pd.Series:
    """Each row's episode id: its case id, and `@trial` for a repetition after the first."""
    trial = frame["trial"].astype("int64")
    cases = frame["case_id"].astype(str)
    return cases.where(trial == 0, cases + TRIAL_MARK + trial.astype(str))


__all__ = ["FRAME_COLUMNS", "FRAME_TYPES", "LoadedRun", "frame_of", "load_run"]
