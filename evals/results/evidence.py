"""A results file read as evidence: what the gate's chain of custody checks a run against.

`xpeval.evals.verdict.custody` judges; this reads, and nothing here trusts what it reads: every
record of the file in order with its calls (`records`, streamed: the file is never in memory
whole), the cases of the case set the header names (`cases_of_run`), and, for a replay, what
each episode's cassette says about itself (`cassette_reader`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from xpeval.evals.cases.model import Case
from xpeval.evals.cassettes.meta import CassetteMeta
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.errors import UserError
from xpeval.evals.results.file import NotAResultsFileError
from xpeval.evals.results.rows import EpisodeKey, ResultRow, RunHeader, RunTrailer

BUILTIN_CASE_SET = "builtin"
"""The case set of the built-in cases (`xpeval.evals.running.suite`'s name for it)."""
DEFAULT_CASSETTES = "cassettes"
"""The cassette folder a header without one names (the run's default)."""

Record = ResultRow | RunTrailer
"""A line after the header: a result row or a completion record."""


_RECORD: TypeAdapter[Record] = TypeAdapter(Annotated[Record, Field(discriminator="type")])
"""A line parsed and checked in one step by pydantic-core (the gate over a million rows spent a
third of its time in `json.loads` and then validating the dict)."""


def records(path: Path) -> Iterator[Record]:
    """Every line after the run header, in file order, parsed whole (a torn last write is no
    line); NotAResultsFileError, naming the line, for one that is neither a row nor a record."""
    with Path(path).open("rb") as handle:
        handle.readline()  # the header, read and checked by `load_run`
        for number, line in enumerate(handle, start=2):
            if not line.endswith(b"\n"):
                return
            try:
                yield _RECORD.validate_json(line)
            except ValidationError:
                yield _record(path, number, line)


def _record(path: Path, number: int, line: bytes) -> Record:
    """A line the one-step parse refused, read again step by step: the record, if Python's JSON
    reader takes what pydantic-core's does not, or the error that says what is wrong."""
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise NotAResultsFileError(f"{path}: line {number} is not a JSON object")
    try:
        if value.get("type") == "result":
            return ResultRow.model_validate(value)
        if value.get("type") == "complete":
            return RunTrailer.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise NotAResultsFileError(f"{path}: line {number}: {where}: {first['msg']}") from exc
    raise NotAResultsFileError(f"{path}: line {number} is of unknown type {value.get('type')!r}")


def case_folder(header: RunHeader, root: Path) -> Path:
    """The folder of the case set a run's header names (relative names: to the project root)."""
    from xpeval.evals.cases.loader import BUILTIN_DIR

    case_set = str(header.config.get("case_set") or BUILTIN_CASE_SET)
    if case_set == BUILTIN_CASE_SET:
        return BUILTIN_DIR
    folder = Path(case_set)
    return folder if folder.is_absolute() else root / folder


def cases_of_run(header: RunHeader, root: Path) -> dict[str, Case]:
    """Every case of the run's case set by id; a UserError when the set is not here (its rows
    cannot be scored again without it)."""
    from xpeval.evals.cases import load_cases

    folder = case_folder(header, root)
    if not folder.is_dir():
        raise UserError(
            f"cannot score the run's rows again: its case set {header.config.get('case_set')!r} is not "
            f"at {folder} (run the gate from the project root)"
        )
    return {item.case.id: item.case for item in load_cases(folder)}


def cassette_reader(header: RunHeader, root: Path) -> Callable[[EpisodeKey], CassetteMeta | None]:
    """What the cassette of an episode of a replay says about itself, read when asked (None: no
    cassette there, or one whose metadata cannot be read or is over the input limits)."""
    label = Path(str(header.config.get("cassettes") or DEFAULT_CASSETTES))
    store = CassetteStore(label if label.is_absolute() else root / label)

    def provenance(key: EpisodeKey) -> CassetteMeta | None:
        episode, adapter, model = key
        try:
            return store.meta(store.path(adapter, episode, model))
        except (UserError, OSError, ValueError):  # no provenance to vouch for the row
            return None

    return provenance


__all__ = ["Record", "case_folder", "cases_of_run", "cassette_reader", "records"]
