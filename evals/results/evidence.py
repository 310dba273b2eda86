"""A results file read as evidence: what the gate's chain of custody checks a run against.

`xpeval.evals.verdict.custody` judges; this reads, and nothing here trusts what it reads: every
record of the file in order with its calls (`records`, streamed: the file is never in memory
whole), the project's case set (`project_case_set`: never one a header names, which any file
could point anywhere) checked against the cases the header records (`check_case_set`), and,
for a replay, what each episode's cassette says about itself (`cassette_reader`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from xpeval.errors import UserError
from xpeval.evals.cases.model import Case
from xpeval.evals.cassettes.meta import CassetteMeta
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.results.batch_records import BatchAnswerKept, BatchIntent, BatchSettled, BatchSubmitted
from xpeval.evals.results.file import NotAResultsFileError
from xpeval.evals.results.rows import EpisodeKey, ResultRow, RunHeader, RunTrailer
from xpeval.evals.results.run_plan import CASE_DIGESTS, case_digest, case_digests

BUILTIN_CASE_SET = "builtin"
"""The case set of the built-in cases (`xpeval.evals.running.suite`'s name for it)."""
DEFAULT_CASSETTES = "cassettes"
"""The cassette folder a header without one names (the run's default)."""

Record = ResultRow | RunTrailer | BatchIntent | BatchSubmitted | BatchSettled | BatchAnswerKept
"""A line after the header: a result row, a completion record, or a `--batch` run's batch record."""


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
        if value.get("type") == "batch":
            return BatchIntent.model_validate(value)
        if value.get("type") == "batch_submitted":
            return BatchSubmitted.model_validate(value)
        if value.get("type") == "batch_settled":
            return BatchSettled.model_validate(value)
        if value.get("type") == "batch_answer":
            return BatchAnswerKept.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise NotAResultsFileError(f"{path}: line {number}: {where}: {first['msg']}") from exc
    raise NotAResultsFileError(f"{path}: line {number} is of unknown type {value.get('type')!r}")


@dataclass(frozen=True)
class CaseSet:
    """The case set a command judges rows on: the project's (`--case-dir`, else `[tool.xpeval]`
    `cases`, else the built-in cases), never the one a results header names."""

    label: str
    """Its name in run headers and baselines (`builtin`, or the folder relative to the project root)."""
    folder: Path
    cases: dict[str, Case]

    def digests(self) -> dict[str, str]:
        return case_digests(self.cases.values())


def project_case_set(root: Path, case_dir: Path | None = None) -> CaseSet:
    """The project's case set: `case_dir` when given, else the project's `[tool.xpeval]` `cases`,
    else the built-in cases (read within the project's input limits)."""
    from xpeval.evals.cases import load_cases
    from xpeval.evals.cases.loader import BUILTIN_DIR
    from xpeval.evals.project import project_settings

    folder = case_dir if case_dir is not None else project_settings(root).cases
    if folder is None:
        label, folder = BUILTIN_CASE_SET, BUILTIN_DIR
    else:
        label = _label(folder, root)
    return CaseSet(label, folder, {item.case.id: item.case for item in load_cases(folder)})


def _label(folder: Path, root: Path) -> str:
    """A case folder's name as a run header records it (`xpeval.evals.running.suite.project_label`)."""
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return folder.as_posix()


def _some(names: list[str]) -> str:
    return ", ".join(name[:100] for name in names[:3]) + (", ..." if len(names) > 3 else "")


def check_case_set(path: Path, header: RunHeader, case_set: CaseSet, *, absent_ok: bool = False) -> None:
    """UserError, one line, unless every case the run's header records is in `case_set` with the
    same content (its digest): rows are judged on the project's cases, so they must be the ones
    the run played (a folder of the same name holding other cases is another case set).
    `absent_ok`: a case the set does not hold is let through (the report shows such an episode
    without its case; it judges nothing), a case it holds with other content never is."""
    recorded = header.config.get(CASE_DIGESTS)
    named = header.config.get("case_set", BUILTIN_CASE_SET)
    if not isinstance(recorded, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in recorded.items()
    ):
        raise UserError(
            f"{path}: its run header records no case digests, so which cases it played cannot be checked "
            "(written by an older xpeval, or not by xpeval): run it again"
        )
    unrecorded = [c for c in (header.plan.cases if header.plan else []) if c not in recorded]
    if unrecorded:
        raise UserError(
            f"{path}: its run header plans case {unrecorded[0][:200]!r} but records no digest of it: "
            "not a header xpeval wrote"
        )
    absent = [] if absent_ok else [case_id for case_id in recorded if case_id not in case_set.cases]
    changed = [
        case_id
        for case_id, digest in recorded.items()
        if case_id in case_set.cases and case_digest(case_set.cases[case_id]) != digest
    ]
    if absent or changed:
        what = (
            f"{len(changed)} of its cases differ ({_some(changed)})"
            if changed
            else f"{len(absent)} of its cases are not there ({_some(absent)})"
        )
        raise UserError(
            f"{path}: ran case set {str(named)[:200]!r}, not the project's case set {case_set.label!r} "
            f"({case_set.folder}): {what}; pass --case-dir with the folder of the cases it ran"
        )


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


__all__ = ["CaseSet", "Record", "cassette_reader", "check_case_set", "project_case_set", "records"]
