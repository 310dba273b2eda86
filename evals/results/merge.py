"""Merge the results files of a sharded run (`xpeval run --shard i/N`, a CI matrix) into one
complete run whose header plans every episode, so `xpeval gate` judges it like an unsharded run.

What is merged must be one run cut in N: every file a complete shard (its completion record and
a final row for each episode its shard plans), all of the same configuration (the run header's
settings, the shard aside), of the same N, each index once, none missing, no episode in two
files. Anything else is refused in one line naming the files, before anything is written.

A shard comes from another CI job: it is untrusted input. Each is checked by `vouch` before its
rows are merged, and `xpeval merge` passes the gate's own chain of custody
(`xpeval.evals.verdict.custody.check_custody`: rows scored again, one final row per planned
episode, the completion record's count, the run id, the replay's sources), so a shard the gate
would refuse never becomes a merged file it passes. The storage room cannot import the verdict,
hence the argument; it has no default, so no caller merges unchecked shards by omission.

The merged header is the one the unsharded run would write: the same settings with `shard`
unset, the plan without a shard, and `some_cases` true only when the shards did not run every
case of their case set (a shard always says `some_cases`, since it runs part of the set). Its
fingerprint is that configuration's, its run id the earliest shard's start with it; each row
keeps every attempt, renamed to the merged run. The file is written whole under a temporary
name and renamed into place, so a reader never sees half a merge.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xpeval.errors import UserError
from xpeval.evals.results.batch_records import BATCH_RECORD_TYPES
from xpeval.evals.results.load import LoadedRun, load_run
from xpeval.evals.results.rows import RunHeader, RunTrailer, merged_run_id, now_iso, settings_fingerprint
from xpeval.evals.results.run_plan import RunPlan, Shard

SHARD_ONLY = ("shard", "some_cases")
"""Header settings that differ between the shards of one run and the run itself."""
MERGED_FROM = "merged_from"
"""A merged header's note of the shard runs it was made from (not part of its fingerprint)."""


Vouch = Callable[[LoadedRun, Path], None]
"""Checks one shard (its loaded run, the project root) and raises a UserError when it is not
evidence to merge."""


class MergeError(UserError):
    """Files that are not the complete shards of one run."""


@dataclass(frozen=True)
class MergedRun:
    path: Path
    header: RunHeader
    shards: int
    rows: int
    """Result lines written (every attempt of every episode)."""
    episodes: int


def _label(path: Path) -> str:
    return path.name


def _shard_of(run: LoadedRun) -> Shard:
    plan = run.header.plan
    if plan is None or plan.shard is None:
        raise MergeError(
            f"{run.path}: not a shard (its run has no --shard i/N); merge takes the shards of a run"
        )
    return Shard.parse(plan.shard)


def _settings(header: RunHeader) -> dict[str, Any]:
    return {key: value for key, value in header.config.items() if key not in (*SHARD_ONLY, MERGED_FROM)}


def _check_same_run(runs: Sequence[LoadedRun]) -> None:
    first = runs[0]
    settings = _settings(first.header)
    plan = first.header.plan
    assert plan is not None
    for other in runs[1:]:
        theirs = _settings(other.header)
        differ = sorted(k for k in {*settings, *theirs} if settings.get(k) != theirs.get(k))
        if differ:
            raise MergeError(
                f"{_label(first.path)} and {_label(other.path)} are not shards of one run: their "
                f"configurations differ in {', '.join(differ)}"
            )
        other_plan = other.header.plan
        assert other_plan is not None
        if (other_plan.cases, other_plan.models) != (plan.cases, plan.models):
            raise MergeError(
                f"{_label(first.path)} and {_label(other.path)} are not shards of one run: they plan "
                "different cases or models"
            )


def _check_shards(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """The runs in shard order, or MergeError for other splits, repeats and gaps."""
    shards = {run.path: _shard_of(run) for run in runs}
    counts = sorted({shard.count for shard in shards.values()})
    if len(counts) > 1:
        named = ", ".join(f"{_label(p)} ({s.index}/{s.count})" for p, s in shards.items())
        raise MergeError(f"the files split the run differently: {named}")
    count = counts[0]
    by_index: dict[int, LoadedRun] = {}
    for run in runs:
        index = shards[run.path].index
        if index in by_index:
            raise MergeError(
                f"shard {index}/{count} given twice: {_label(by_index[index].path)} and {_label(run.path)}"
            )
        by_index[index] = run
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise MergeError(
            f"missing shard(s) {', '.join(missing)} of {count}: merge needs every shard of the run"
        )
    return [by_index[i] for i in range(1, count + 1)]


def _check_disjoint(runs: Sequence[LoadedRun]) -> None:
    seen: dict[tuple[str, str, str], Path] = {}
    for run in runs:
        keys = run.frame[["case_id", "adapter", "model"]].itertuples(index=False, name=None)
        for key in keys:
            if key in seen:
                raise MergeError(
                    f"episode {'/'.join(key)} is in {_label(seen[key])} and in {_label(run.path)}: "
                    "shards of one run never share an episode"
                )
            seen[key] = run.path


def _all_cases(header: RunHeader, root: Path) -> bool:
    """Whether the run planned every case of its case set (what an unsharded run's header says
    with `some_cases`, read back from the project's case set: never a folder the header names;
    each shard's recorded cases were checked against it when it was vouched for)."""
    from xpeval.evals.results.evidence import project_case_set

    every = set(project_case_set(root).cases)
    assert header.plan is not None
    return set(header.plan.cases) >= every


def merged_header(runs: Sequence[LoadedRun], root: Path) -> RunHeader:
    """The header of the unsharded run the shards are parts of."""
    first = runs[0].header
    assert first.plan is not None
    settings = dict(first.config)
    settings["shard"] = None
    some_cases = bool(first.config.get("some_cases")) and not _all_cases(first, root)
    settings["some_cases"] = some_cases
    run_fingerprint = settings_fingerprint(settings)
    started = min(run.header.started_at for run in runs)
    settings[MERGED_FROM] = [run.header.run for run in runs]
    return RunHeader(
        run=merged_run_id(started, run_fingerprint, settings[MERGED_FROM]),
        fingerprint=run_fingerprint,
        started_at=started,
        config=settings,
        plan=RunPlan(cases=list(first.plan.cases), models=dict(first.plan.models), shard=None),
    )


def _results(path: Path) -> Iterator[dict[str, Any]]:
    """Every result record of a shard file, and its batch records (a `--batch` shard's batches
    stay accounted for in the merged run), in order (a torn last write is no line)."""
    with path.open("rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                return
            record = json.loads(line)
            if record.get("type") in _CARRIED:
                yield record


_CARRIED = ("result", *BATCH_RECORD_TYPES)


def merge_shards(paths: Sequence[Path], out: Path, *, vouch: Vouch, root: Path | None = None) -> MergedRun:
    """Merge the complete shards at `paths` into `out`; MergeError (one line) when they are not
    the shards of one run, or what `vouch` raises for a shard it refuses, before anything is
    written."""
    if not paths:
        raise MergeError("merge needs the results files of every shard of a run")
    resolved = [Path(p).resolve() for p in paths]
    for index, path in enumerate(resolved):
        if path in resolved[:index]:
            raise MergeError(f"{paths[index]} is given twice")
    if Path(out).resolve() in resolved:
        raise MergeError(f"--out {out} is one of the shards; write the merged run to another file")
    runs = [load_run(Path(p)) for p in paths]
    for run in runs:
        _shard_of(run)
        run.check_complete()
    _check_same_run(runs)
    ordered = _check_shards(runs)
    _check_disjoint(ordered)
    project = root or Path.cwd()
    for run in ordered:  # the costly check last: every shard is re-read and its rows scored again
        vouch(run, project)
    header = merged_header(ordered, project)
    rows = _write(Path(out), header, [run.path for run in ordered])
    return MergedRun(
        path=Path(out),
        header=header,
        shards=len(ordered),
        rows=rows,
        episodes=sum(len(run.frame) for run in ordered),
    )


def _write(out: Path, header: RunHeader, shards: Sequence[Path]) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    rows = 0
    try:
        with temporary.open("wb") as handle:
            handle.write(_line(header.model_dump(mode="json")))
            for shard in shards:
                for record in _results(shard):
                    record["run"] = header.run
                    handle.write(_line(record))
                    rows += record["type"] == "result"
            handle.write(_line(RunTrailer(run=header.run, finished_at=now_iso(), rows=rows).model_dump()))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, out)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return rows


def _line(record: dict[str, Any]) -> bytes:
    # The results file's own encoding (`xpeval.evals.results.file.ResultsFile._append`).
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


__all__ = ["MergeError", "MergedRun", "Vouch", "merge_shards", "merged_header"]
