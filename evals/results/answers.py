"""Each row's answers read back from a results file, for judging rows against a reference row.

The tidy frame (`xpeval.evals.results.load`) keeps verdicts, not calls; a comparison with a
reference needs the calls themselves, so this reads the final rows whole. `load_reference_run`
is what `xpeval compare` and `xpeval gate --reference` read: both runs complete, of the same case
set, the reference row found by `ADAPTER=MODEL`, and every other row (judged by
`xpeval.evals.verdict.reference`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xpeval.errors import UserError
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.results.load import load_run
from xpeval.evals.results.rows import ResultRow
from xpeval.evals.results.run_plan import CASE_DIGESTS, episode_id


@dataclass(frozen=True)
class Answer:
    """What one episode of one row answered: its calls per turn and its verdicts."""

    calls: tuple[tuple[Mapping[str, Any], ...], ...] = ()
    """Per turn, each call as `{name, arguments, parse_error}`."""
    error: bool = False
    schema_valid: bool | None = None
    correct: bool | None = None

    @property
    def triggered(self) -> bool:
        """Whether the episode returned a tool call (an episode that ended in an error did not)."""
        return not self.error and any(self.calls)


RowAnswers = dict[str, Answer]
"""Episode id (`case`, `case@trial`) -> what the episode answered."""


def row_key(row: ResultRow) -> str:
    return f"{row.source}|{row.adapter}|{row.model}"


def answer_of(row: ResultRow) -> Answer:
    turns = max((call.turn for call in row.calls), default=-1) + 1
    calls = tuple(
        tuple(
            {"name": c.name, "arguments": c.arguments, "parse_error": c.parse_error}
            for c in row.calls
            if c.turn == turn
        )
        for turn in range(turns)
    )
    return Answer(
        calls=calls, error=row.error_kind is not None, schema_valid=row.schema_valid, correct=row.correct
    )


def answers_by_row(path: Path) -> tuple[dict[str, str], dict[str, RowAnswers]]:
    """(the digest of each case the run played, {row key: answers}) of a complete results file."""
    run = load_run(path)
    run.check_complete()
    digests = run.header.config.get(CASE_DIGESTS)
    if not isinstance(digests, dict):
        raise UserError(
            f"{path}: its run header records no case digests, so which cases it played cannot be checked "
            "(written by an older xpeval, or not by xpeval): run it again"
        )
    rows: dict[str, RowAnswers] = {}
    for row in final_results(ResultsFile.read(path).rows):
        rows.setdefault(row_key(row), {})[episode_id(row.case_id, row.trial)] = answer_of(row)
    return {str(k): str(v) for k, v in digests.items()}, rows


def parse_reference(spec: str) -> tuple[str, str]:
    """`ADAPTER=MODEL` -> (adapter, model)."""
    adapter, sep, model = spec.partition("=")
    if not sep or not adapter.strip() or not model.strip():
        raise UserError(f"--reference {spec!r}: expected ADAPTER=MODEL (e.g. moonshot=kimi-k2-0905-preview)")
    return adapter.strip(), model.strip()


@dataclass(frozen=True)
class ReferenceRun:
    """The rows to judge and the reference row, read from their results files."""

    case_digests: dict[str, str]
    """The digest of each case the judged run played (`xpeval.evals.results.run_plan.case_digest`)."""
    rows: dict[str, RowAnswers]
    reference_key: str
    reference: RowAnswers


def load_reference_run(results: Path, spec: str, against: Path | None = None) -> ReferenceRun:
    """The rows of `results` and the reference row `spec` of `against` (default: `results`).
    UserError when a file is not a complete run, the two runs played different cases (a case
    set is identified by its cases' content, never by a folder's name: every case both runs
    played must have one digest, and they must share one), or the reference row is not there
    (or is there from more than one source)."""
    adapter, model = parse_reference(spec)
    digests, rows = answers_by_row(results)
    if against is not None:
        theirs, others = answers_by_row(against)
        _same_cases(results, digests, against, theirs)
    else:
        others = rows
    found = [key for key in others if key.split("|", 2)[1:] == [adapter, model]]
    where = against or results
    if not found:
        listed = ", ".join(sorted({"=".join(k.split("|", 2)[1:]) for k in others})) or "none"
        raise UserError(f"{where}: no row {adapter}={model} to use as the reference (rows: {listed})")
    if len(found) > 1:
        raise UserError(f"{where}: {adapter}={model} was measured from several sources ({', '.join(found)})")
    key = found[0]
    judged = {k: v for k, v in rows.items() if against is not None or k != key}
    if not judged:
        raise UserError(f"{results}: no row to compare with the reference {adapter}={model}")
    return ReferenceRun(case_digests=digests, rows=judged, reference_key=key, reference=others[key])


def _same_cases(results: Path, mine: Mapping[str, str], against: Path, theirs: Mapping[str, str]) -> None:
    shared = sorted(set(mine) & set(theirs))
    changed = [case_id for case_id in shared if mine[case_id] != theirs[case_id]]
    if changed or not shared:
        what = (
            f"{len(changed)} of the {len(shared)} cases both ran differ in content "
            f"({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''})"
            if changed
            else "they share no case"
        )
        raise UserError(
            f"{results} and {against} ran different case sets: {what}; a reference must answer the same cases"
        )
