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

import hashlib
import json
import os
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals.errors import UserError
from evals.plan import PlannedKey, RunPlan, episode_id

RowSource = Literal["live", "cassette", "local-model", "emulated"]
"""Where a number comes from: a live provider; a cassette recorded live (model and date in the
row); the local model (live or replayed from its recording); the emulator (pipeline only)."""

EpisodeKey = tuple[str, str, str]
"""(episode id, adapter id, model): the episode id is the case id, `@trial` for later trials."""


class CallRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn: int
    id: str | None
    name: str
    arguments: dict[str, Any]
    parse_error: str | None = None


MAX_VALUE_BYTES = 4096
"""What a row keeps of one argument value, a text or an error message; the rest is replaced by
its length and sha256 (a model that answers 5 MB must not make every row 5 MB)."""
MAX_CALL_BYTES = 4 * MAX_VALUE_BYTES
"""What a row keeps of one call's arguments together."""


class Truncation(BaseModel):
    """A value a row does not keep whole: where it was, its size and its hash."""

    model_config = ConfigDict(extra="forbid")

    field: str
    bytes: int
    sha256: str


class ResultRow(BaseModel):
    """One attempt at one case through one adapter and model."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["result"] = "result"
    run: str
    case_id: str
    trial: int = 0
    """Which repetition of the case this is (`--repeat`)."""
    category: str
    adapter: str
    wire: str
    model: str
    attempt: int
    final: bool
    """The last attempt for this episode (success, a non-retryable failure, or retries spent)."""
    source: RowSource
    recorded_at: str | None = None
    """For cassette, local-model and emulated rows replayed from a recording: when it was made."""
    recorded_model: str | None = None
    correct: bool
    tool_selection_correct: bool
    arguments_correct: bool | None
    irrelevance: bool
    malformed: bool
    reason: str | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    error_kind: str | None = None
    """ProviderError.kind, or "cassette" (a replay problem: a conformance failure) or "runner"."""
    error_type: str | None = None
    error_status: int | None = None
    error_message: str | None = None
    latency_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    """What the episode's tokens cost at the model's published price; None when unknown."""
    steps: int = 1
    started_at: str
    text: str | None = None
    """The model's last visible text in the episode."""
    refusal: str | None = None
    """The model's refusal, when it refused (scored as no call)."""
    truncated: list[Truncation] = Field(default_factory=list)
    """Values cut to `MAX_VALUE_BYTES`: each keeps its first bytes, its length and its sha256."""

    @property
    def key(self) -> EpisodeKey:
        return (episode_id(self.case_id, self.trial), self.adapter, self.model)


class RunHeader(BaseModel):
    """The first line of a results file: which run it is and every episode it plans."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["run"] = "run"
    run: str
    fingerprint: str
    started_at: str
    config: dict[str, Any]
    plan: RunPlan | None = None
    """Every planned episode: a run is complete only when each has a final row."""


class RunTrailer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["complete"] = "complete"
    run: str
    finished_at: str
    rows: int


def _cut(text: str, field: str, notes: list[Truncation], limit: int = MAX_VALUE_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    digest = hashlib.sha256(data).hexdigest()
    notes.append(Truncation(field=field, bytes=len(data), sha256=digest))
    kept = data[:limit].decode("utf-8", errors="ignore")
    return f"{kept}... [truncated: {len(data)} bytes, sha256 {digest}]"


def _bounded_arguments(arguments: dict[str, Any], where: str, notes: list[Truncation]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if isinstance(value, str):
            out[name] = _cut(value, f"{where}.{name}", notes)
            continue
        text = json.dumps(value, ensure_ascii=False, default=str)
        out[name] = value if len(text) <= MAX_VALUE_BYTES else _cut(text, f"{where}.{name}", notes)
    whole = json.dumps(out, ensure_ascii=False, default=str)
    if len(whole.encode("utf-8")) > MAX_CALL_BYTES:
        return {"<arguments>": _cut(whole, where, notes, MAX_CALL_BYTES)}
    return out


def bounded(row: ResultRow) -> ResultRow:
    """The row with every argument value, text and message cut to `MAX_VALUE_BYTES` (the
    cuts listed in `truncated`): memory and results files stay flat however much a model sends."""
    notes: list[Truncation] = []
    calls = [
        call.model_copy(
            update={"arguments": _bounded_arguments(call.arguments, f"calls[{i}].arguments", notes)}
        )
        for i, call in enumerate(row.calls)
    ]
    update: dict[str, Any] = {"calls": calls}
    for name in ("text", "refusal", "reason", "error_message"):
        value = getattr(row, name)
        if isinstance(value, str):
            update[name] = _cut(value, name, notes)
    for i, call in enumerate(row.calls):
        if call.parse_error:
            calls[i] = calls[i].model_copy(
                update={"parse_error": _cut(call.parse_error, f"calls[{i}].parse_error", notes)}
            )
    if not notes:
        return row
    return row.model_copy(update={**update, "truncated": [*row.truncated, *notes]})


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def fingerprint(config: dict[str, Any]) -> str:
    """A stable identity for a run's configuration (what must match to resume it)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="xpeval-results", daemon=True)
        self._thread.start()

    def put(self, line: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._lines.put(line)

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
    (`evals.load`). `read()` parses every row, for tools that want them all.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: RunHeader | None = None
        self.rows: list[ResultRow] = []
        """The rows parsed by `read()` (rows appended since are in the file, not here)."""
        self.complete = False
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
