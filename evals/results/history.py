"""The history store: every run's tidy results, one Parquet file per run, partitioned by date.

    <store>/date=YYYY-MM-DD/<run>.parquet                       the run's rows (HISTORY_COLUMNS)
    <store>/_schema_acceptance/date=YYYY-MM-DD/<run>.parquet    a nightly's live schema-acceptance pairs

A row is one episode of the run's tidy frame (`xpeval.evals.results.load.FRAME_COLUMNS`) plus the run's id,
date, kind (`nightly` or `run`), case set and verdict. Readers get a DataFrame
(`load_history`) and the per-run rates with their Wilson intervals (`trend`), the frame the
HTML report plots.

Why files and not a database: every writer writes a file of its own, first under a dot-prefixed
temporary name in the partition folder, fsynced, then renamed into place (`os.replace`, atomic
within a filesystem). Concurrent writers therefore never touch the same file, a reader sees a
run whole or not at all, and a writer killed mid-write leaves only a dot-file that every reader
skips (the rule pyarrow's own dataset discovery applies to names starting with `.` or `_`, which
is also why the sibling table's folder starts with `_`). A single-file database (DuckDB, SQLite)
would lock that file against a second writer, and DuckDB would be a second columnar engine next
to pyarrow, which already reads the results files (`xpeval.evals.results.load`). A CI cache or artifact of the
store is a plain folder; `docs/nightly.md` says more.

A store is also handed around (a CI cache, an artifact of another job), so readers check it: a
run is its id, read once whatever folder it sits in and dated by its own `run_date`; a file of
another schema, two different files of one run, and a `date=` folder that names no date are each
a one-line UserError naming what is wrong.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from xpeval.errors import UserError
from xpeval.evals.results.load import FRAME_TYPES, LoadedRun

RunKind = Literal["nightly", "run"]
KINDS: tuple[RunKind, ...] = ("nightly", "run")
SCHEMA_TABLE = "_schema_acceptance"
"""The sibling table's folder inside the store (`_`: skipped by the results table's readers)."""
PARTITION = re.compile(r"^date=(\d{4}-\d{2}-\d{2})$")


RUN_COLUMNS: dict[str, pa.DataType] = {
    "run_date": pa.timestamp("us"),
    "kind": pa.string(),
    "case_set": pa.string(),
    "passed": pa.bool_(),
}
"""What the store adds to each row: the run's date (naive UTC midnight), kind, case set, verdict."""
SCHEMA = pa.schema([pa.field(name, kind) for name, kind in {**FRAME_TYPES, **RUN_COLUMNS}.items()])
HISTORY_COLUMNS = SCHEMA.names

SCHEMA_PAIR_TYPES: dict[str, pa.DataType] = {
    "run": pa.string(),
    "run_date": pa.timestamp("us"),
    "adapter": pa.string(),
    "model": pa.string(),
    "schema": pa.string(),
    "tool": pa.string(),
    "predicted": pa.string(),
    "rules": pa.string(),
    "answer": pa.string(),
    "status": pa.int64(),
    "message": pa.string(),
    "agrees": pa.bool_(),
}
"""One live schema-acceptance pair (`xpeval.evals.nightly.schema_probes.SchemaProbe`): the checker's
prediction
(`accepted`, `refused`, or `not-sent` when the adapter itself refuses the tool), the rules it
cites, and the provider's answer (`accepted`, `refused`, `error`, `not-sent`) with its status
and message."""
SCHEMA_PAIRS = pa.schema([pa.field(name, kind) for name, kind in SCHEMA_PAIR_TYPES.items()])


def run_date(loaded: LoadedRun) -> date:
    """The UTC date a run started on (its partition)."""
    started = datetime.fromisoformat(loaded.header.started_at)
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return started.astimezone(UTC).date()


def file_name(run: str) -> str:
    """A run's file name: its id with what file systems and CI artifacts refuse (`:`, `+`, `/`)
    replaced, so the store can be uploaded as an artifact anywhere. When anything was replaced,
    the name ends with a hash of the id itself: two ids that differ only in replaced characters
    (`a:b`, `a+b`) get two files, so appending one never replaces the other."""
    safe = _safe(run)
    if safe == run:
        return f"{safe}.parquet"
    return f"{safe}-{hashlib.sha256(run.encode('utf-8')).hexdigest()[:8]}.parquet"


def _safe(run: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", run).strip("-.") or "run"


def _legacy_name(run: str) -> str:
    """The name stores written before the hash suffix gave a run's file."""
    return f"{_safe(run)}.parquet"


def append(
    store: Path,
    loaded_run: LoadedRun,
    *,
    kind: RunKind,
    passed: bool,
    schema_pairs: pd.DataFrame | None = None,
) -> Path:
    """Add a complete run to the store (its file replaced if the run is already there) and
    return the file's path. The schema pairs, when given, go to the sibling table."""
    if kind not in KINDS:
        raise UserError(f"history kind must be one of {', '.join(KINDS)}, got {kind!r}")
    loaded_run.check_complete()
    header = loaded_run.header
    day = run_date(loaded_run)
    frame = loaded_run.frame.assign(
        run=header.run,
        run_date=pd.Timestamp(day),
        kind=kind,
        case_set=str(header.config.get("case_set") or "builtin"),
        passed=bool(passed),
    )
    table = pa.Table.from_pandas(frame[HISTORY_COLUMNS], schema=SCHEMA, preserve_index=False)
    path = _write(store / f"date={day.isoformat()}", file_name(header.run), table)
    _drop_legacy(path.parent, header.run, path.name)
    if schema_pairs is not None:
        pairs = schema_pairs.assign(run=header.run, run_date=pd.Timestamp(day))
        for column in SCHEMA_PAIRS.names:
            if column not in pairs:
                pairs[column] = None
        pairs_table = pa.Table.from_pandas(
            pairs[SCHEMA_PAIRS.names], schema=SCHEMA_PAIRS, preserve_index=False
        )
        pairs_path = _write(
            store / SCHEMA_TABLE / f"date={day.isoformat()}", file_name(header.run), pairs_table
        )
        _drop_legacy(pairs_path.parent, header.run, pairs_path.name)
    return path


def _drop_legacy(folder: Path, run: str, kept: str) -> None:
    """Appending a run again replaces its file, also when an older store named that file
    without the hash suffix: the old-named file goes, but only when it holds this run alone."""
    legacy = folder / _legacy_name(run)
    if legacy.name == kept or not legacy.is_file():
        return
    try:
        held = _runs_in(legacy)
    except UserError:
        return
    if held == [run]:
        legacy.unlink(missing_ok=True)
        _fsync_dir(folder)


def _write(folder: Path, name: str, table: pa.Table) -> Path:
    """Write `table` to `folder/name` atomically: a dot-named temporary file, fsynced, renamed."""
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / name
    temporary = folder / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        with temporary.open("wb") as handle:
            pq.write_table(table, handle, compression="zstd")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, final)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_dir(folder)
    return final


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (a machine crash after it keeps the new name)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _files(root: Path) -> list[Path]:
    """Every finished run file under `root`'s date partitions, oldest folder first. Dot- and
    underscore-named entries (temporary files, the sibling table) are not runs, nor is anything
    outside a `date=` folder; a `date=` folder that names no real date is a damaged store."""
    if not root.is_dir():
        return []
    found: list[Path] = []
    for folder in sorted(root.iterdir()):
        if not folder.name.startswith("date="):
            continue
        match = PARTITION.match(folder.name)
        try:
            if match is None or not folder.is_dir():
                raise ValueError
            date.fromisoformat(match.group(1))
        except ValueError:
            raise UserError(
                f"{folder}: not a date partition of the history store (expected a folder date=YYYY-MM-DD)"
            ) from None
        found.extend(
            path
            for path in sorted(folder.iterdir())
            if path.suffix == ".parquet" and not path.name.startswith((".", "_")) and path.is_file()
        )
    return found


def _since(value: date | str | None) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UserError(f"--since must be a date YYYY-MM-DD, got {value!r}") from None


def _check_schema(path: Path, schema: pa.Schema) -> None:
    """UserError, naming the file, unless it has every column of `schema` with its type (a file
    of another schema would otherwise be read as rows of nulls: a run that never happened)."""
    try:
        found = pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: not a history Parquet file: {reason}") from exc
    missing = [name for name in schema.names if found.get_field_index(name) < 0]
    if missing:
        shown = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
        raise UserError(
            f"{path}: not a history file of this store's schema (no column {shown}): move it out of the store"
        )
    for expected in schema:
        actual = found.field(expected.name).type
        if not actual.equals(expected.type):
            raise UserError(
                f"{path}: not a history file of this store's schema (column {expected.name} is {actual}, "
                f"expected {expected.type}): move it out of the store"
            )


def _runs_in(path: Path) -> list[str]:
    """The run ids a stored file's rows carry (read as a dictionary column: cheap at any size)."""
    try:
        column = pq.read_table(path, columns=["run"], read_dictionary=["run"]).column("run")
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a history Parquet file: {str(exc).splitlines()[0]}") from exc
    if column.null_count:
        raise UserError(f"{path}: {column.null_count} rows carry no run id: not a history file")
    return sorted(str(value) for value in pc.unique(column.cast(pa.string())).to_pylist())


def _one_file_per_run(files: list[Path]) -> list[Path]:
    """The files to read, each run once: a run is its id, whatever folder or name its file has.
    A copy of a run's file elsewhere in the store is read once; two files that claim one run
    with different rows are refused (which one is the run cannot be told), as is a file holding
    several runs (`append` writes one run per file)."""
    kept: list[Path] = []
    seen: dict[str, Path] = {}
    for path in files:
        held = _runs_in(path)
        if not held:
            kept.append(path)
            continue
        if len(held) > 1:
            raise UserError(
                f"{path}: holds rows of {len(held)} runs ({', '.join(held[:3])}); a history file holds one"
            )
        run = held[0]
        first = seen.get(run)
        if first is None:
            seen[run] = path
            kept.append(path)
        elif not pq.read_table(first).equals(pq.read_table(path)):
            raise UserError(
                f"run {run} is stored twice with different rows: {first} and {path}: remove the wrong one"
            )
    return kept


def _read(files: list[Path], schema: pa.Schema, where: pads.Expression | None) -> pd.DataFrame:
    for path in files:
        _check_schema(path, schema)
    files = _one_file_per_run(files)
    if not files:
        return pa.Table.from_pylist([], schema=schema).to_pandas()
    try:
        dataset = pads.dataset([str(p) for p in files], schema=schema, format="parquet")
        table = dataset.to_table(filter=where)
    except (pa.ArrowInvalid, OSError) as exc:
        reason = str(exc).splitlines()[0]
        raise UserError(f"the history store has a file that is not a history Parquet file: {reason}") from exc
    return table.to_pandas()


def _filter(
    adapter: str | None,
    kind: RunKind | None,
    run: str | None,
    case_set: str | None,
    since: date | None = None,
) -> pads.Expression | None:
    where: pads.Expression | None = None
    for column, value in (("adapter", adapter), ("kind", kind), ("run", run), ("case_set", case_set)):
        if value is None:
            continue
        term = pads.field(column) == value
        where = term if where is None else where & term
    if since is not None:
        # the run's own date, not its folder's name: a run counts by what it is, wherever it sits
        start = pa.scalar(datetime(since.year, since.month, since.day), type=pa.timestamp("us"))
        term = pads.field("run_date") >= start
        where = term if where is None else where & term
    return where


def load_history(
    store: Path,
    *,
    adapter: str | None = None,
    since: date | str | None = None,
    kind: RunKind | None = None,
    run: str | None = None,
    case_set: str | None = None,
) -> pd.DataFrame:
    """Every stored row (the columns of HISTORY_COLUMNS), oldest run first; optionally of one
    adapter, from a date on (`since`, inclusive), of one kind, run or case set."""
    files = _files(Path(store))
    frame = _read(files, SCHEMA, _filter(adapter, kind, run, case_set, _since(since)))
    return frame.sort_values(["run_date", "run"], kind="stable").reset_index(drop=True)


def load_schema_history(
    store: Path, *, adapter: str | None = None, since: date | str | None = None, run: str | None = None
) -> pd.DataFrame:
    """The stored live schema-acceptance pairs (the columns of SCHEMA_PAIRS)."""
    files = _files(Path(store) / SCHEMA_TABLE)
    frame = _read(files, SCHEMA_PAIRS, _filter(adapter, None, run, None, _since(since)))
    return frame.sort_values(["run_date", "run"], kind="stable").reset_index(drop=True)


def runs(history: pd.DataFrame) -> pd.DataFrame:
    """One row per stored run: run, run_date, kind, case_set, passed, episodes (oldest first;
    runs of a day in the order of their ids, which start with their start time)."""
    columns = ["run", "run_date", "kind", "case_set", "passed"]
    if history.empty:
        return pd.DataFrame(columns=[*columns, "episodes"])
    grouped = history.groupby(columns, sort=False, dropna=False).size().rename("episodes").reset_index()
    return grouped.sort_values(["run_date", "run"], kind="stable").reset_index(drop=True)


def last_good(store: Path, *, kind: RunKind = "nightly", case_set: str | None = None) -> str | None:
    """The latest run of `kind` whose own verdict passed (None when there is none)."""
    table = runs(load_history(store, kind=kind, case_set=case_set))
    good = table[table["passed"].astype(bool)]
    return None if good.empty else str(good.iloc[-1]["run"])


__all__ = [
    "HISTORY_COLUMNS",
    "SCHEMA",
    "SCHEMA_PAIRS",
    "append",
    "last_good",
    "load_history",
    "load_schema_history",
    "runs",
]
