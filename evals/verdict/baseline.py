"""The gate's baseline: per-case verdicts of a good run, per scorecard row (pure, plus its file).

A baseline keeps, for every (source, adapter, model) row, one short code per case: the
verdict of each rate in `RATES` order, so the gate can compare the same cases on both sides
(a paired test) and name the cases that flipped. One line per case keeps the file small and
its diffs readable:

    "weather_simple_1": "yyy-nny"

`y` true, `n` false, `-` not applicable, for accuracy, tool selection, arguments, irrelevance
(irrelevance cases only), malformed, errors, schema_valid (episodes that returned a call). For
malformed and errors `y` is the bad outcome. A version 2 baseline (before `schema_valid`) is
read with `-` for it: that rate is not compared until the baseline is written again.

A baseline is written only from a good run (`update`): complete, with no conformance failure,
error and malformed rates under stated thresholds, and emulated rows at their exact values.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from xpeval.errors import UserError
from xpeval.evals.results.run_plan import TRIAL_MARK
from xpeval.evals.verdict.scorecard import RATES

BASELINE_VERSION = 3
READABLE_VERSIONS = {2: 6, 3: 7}
"""Versions read, each with its code length: a version 2 code lacks `schema_valid` (read as `-`)."""
CODE_LEGEND = (
    "accuracy,tool_selection,arguments,irrelevance,malformed,errors,schema_valid; y=true n=false -=n/a"
)
LOWER_IS_BETTER = frozenset({"malformed", "errors"})
CONFORMANCE_KINDS = frozenset({"cassette", "runner", "reasoning_state", "handoff"})
"""Error kinds that are the suite's own failures (a replay problem, a runner bug, a loop that lost
the reasoning state its provider requires back, a conversation the loop could not hand to the
adapter a case turn names), never the model's: each fails the gate whatever the error rate."""
DETERMINISTIC_SOURCES = frozenset({"emulated"})
"""Rows whose answers are a perfect model's: any flipped case is a pipeline bug, not noise."""
DEFAULT_MAX_ERROR_RATE = 0.05
DEFAULT_MAX_MALFORMED_RATE = 0.25


SOURCE_CLASS = {
    "live": "provider",
    "cassette": "provider",
    "local-model": "local-model",
    "emulated": "emulated",
}
"""What a row's numbers are of: a live answer and a replayed live recording are both the
provider's; the local model and the emulator are their own."""


def row_key(source: str, adapter: str, model: str) -> str:
    return f"{source}|{adapter}|{model}"


def comparable(key: str) -> tuple[str, str, str]:
    """(source class, adapter, model): two rows with the same one measure the same thing."""
    source, adapter, model = split_key(key)
    return SOURCE_CLASS.get(source, source), adapter, model


def split_key(key: str) -> tuple[str, str, str]:
    source, adapter, model = [*key.split("|", 2), "", ""][:3]
    return source, adapter, model


def passed(code: str, rate: str) -> bool | None:
    """Whether a case did well on `rate` (for malformed and errors: did not happen); None: n/a."""
    flag = code[RATES.index(rate)]
    if flag == "-":
        return None
    good = flag == "y"
    return not good if rate in LOWER_IS_BETTER else good


def flag_counts(codes: Iterable[str], rate: str) -> tuple[int, int]:
    position = RATES.index(rate)
    flags = [code[position] for code in codes if code[position] != "-"]
    return flags.count("y"), len(flags)


def codes_by_row(frame: pd.DataFrame) -> dict[str, dict[str, str]]:
    """{row key: {case id: code}} of a results frame (final attempts, one per episode).

    Vectorized: a nightly's frame has millions of rows, one Python dict per row would cost
    more than reading them."""
    if frame.empty:
        return {}
    irrelevant = frame["irrelevance"].astype(bool)
    codes = (
        _flags(frame["correct"])
        + _flags(frame["tool_selection_correct"])
        + _flags(frame["arguments_correct"])
        + _flags(frame["correct"]).where(irrelevant, "-")
        + _flags(frame["malformed"])
        + _flags(frame["error"])
        + _flags(frame["schema_valid"])
    )
    keys = frame["source"].astype(str) + "|" + frame["adapter"].astype(str) + "|" + frame["model"].astype(str)
    rows: dict[str, dict[str, str]] = {}
    cases = frame["case_id"].astype(str)
    if "trial" in frame:  # a repetition is its own paired unit: `<case>@<trial>`
        trial = frame["trial"].fillna(0).astype("int64")
        cases = cases.where(trial == 0, cases + TRIAL_MARK + trial.astype(str))
    table = pd.DataFrame({"key": keys, "case": cases, "code": codes})
    for key, group in table.groupby("key", sort=False):
        rows[str(key)] = dict(zip(group["case"], group["code"], strict=True))
    return rows


def _flags(column: pd.Series) -> pd.Series:
    """'y' / 'n' per row, '-' where the value is missing."""
    known = column.notna()
    values = column.where(known, False).astype(bool)
    return pd.Series(["y" if v else "n" for v in values], index=column.index).where(known, "-")


@dataclass
class Baseline:
    case_set: str
    rows: dict[str, dict[str, str]] = field(default_factory=dict)
    run: str | None = None
    """The run the rows were last updated from."""
    version: int = BASELINE_VERSION
    """The file's version: an older one lacks the later rates' verdicts (`READABLE_VERSIONS`)."""
    source: str | None = None
    """The file it was read from (None: built in memory), named in the gate's summary."""

    def counts(self, key: str, rate: str) -> tuple[int, int]:
        """(k, n) of a rate of a row, as the scorecard counts them: cases whose flag is true, of
        the cases where it applies."""
        return flag_counts(self.rows.get(key, {}).values(), rate)

    def document(self) -> dict[str, Any]:
        return {
            "version": BASELINE_VERSION,
            "case_set": self.case_set,
            "run": self.run,
            "case_code": CODE_LEGEND,
            "rows": {key: {"cases": dict(sorted(cases.items()))} for key, cases in sorted(self.rows.items())},
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document(), indent=1, sort_keys=False) + "\n", encoding="utf-8")


MAX_BASELINE_BYTES = 64 * 1024 * 1024
"""The largest baseline read (a 2,000-case baseline of 20 rows is about 1 MB)."""
FIRST_BASELINE_HINT = (
    "write one from a good run with `xpeval gate --update-baseline`, or pass --no-baseline to gate "
    "on conformance only"
)


def read_baseline(path: Path) -> Baseline:
    """The baseline at `path`, checked whole: a UserError (one line, naming the file) for a file
    that is missing, a folder, unreadable, too large, empty, or not a baseline of per-case
    verdicts with at least one row. The gate compares against nothing it could not read."""
    document = _document(path)
    version = document.get("version")
    length = READABLE_VERSIONS.get(version) if isinstance(version, int) else None
    if length is None or not isinstance(version, int):
        raise UserError(
            f"baseline {path} is version {version!r}, not {BASELINE_VERSION} (per-case "
            "verdicts): write it again with `xpeval gate --update-baseline` from a good run"
        )
    case_set = document.get("case_set")
    if not isinstance(case_set, str) or not case_set:
        raise UserError(f'baseline {path} names no case set ("case_set" is {case_set!r})')
    found = document.get("rows")
    if not isinstance(found, dict):
        raise UserError(f'baseline {path}: "rows" is {type(found).__name__}, not an object of rows')
    if not found:
        raise UserError(f"baseline {path} has no rows: it would compare nothing; {FIRST_BASELINE_HINT}")
    rows: dict[str, dict[str, str]] = {}
    for key, row in found.items():
        cases = row.get("cases") if isinstance(row, dict) else None
        if not all(split_key(key)) or not isinstance(cases, dict) or not cases:
            raise UserError(f"baseline {path}: row {key!r} has no valid per-case verdicts")
        if not all(isinstance(c, str) and len(c) == length and set(c) <= set("yn-") for c in cases.values()):
            raise UserError(f"baseline {path}: row {key!r} has no valid per-case verdicts")
        pad = "-" * (len(RATES) - length)  # rates the version did not have yet: not applicable
        rows[str(key)] = {str(case): code + pad for case, code in cases.items()}
    run = document.get("run")
    return Baseline(
        case_set=case_set,
        rows=rows,
        run=run if isinstance(run, str) else None,
        version=version,
        source=str(path),
    )


def _document(path: Path) -> dict[str, Any]:
    if path.is_dir():
        raise UserError(f"baseline {path} is a folder, not a baseline file")
    try:
        size = path.stat().st_size
        if size > MAX_BASELINE_BYTES:
            raise UserError(f"baseline {path} is {size} bytes, above the {MAX_BASELINE_BYTES} bytes read")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"baseline {path} does not exist: {FIRST_BASELINE_HINT}") from None
    except OSError as exc:
        raise UserError(f"baseline {path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"baseline {path} is not UTF-8 text: {exc.reason}") from None
    if not text.strip():
        raise UserError(f"baseline {path} is empty; {FIRST_BASELINE_HINT}")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than Python's stack
        raise UserError(f"baseline {path} is not valid JSON: {exc}") from None
    if not isinstance(document, dict) or "rows" not in document:
        raise UserError(f'baseline {path} is not an xpeval baseline (a JSON object with "rows")')
    return document


@dataclass(frozen=True)
class Thresholds:
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    max_malformed_rate: float = DEFAULT_MAX_MALFORMED_RATE


def refusals(frame: pd.DataFrame, thresholds: Thresholds) -> list[str]:
    """Why this run's results must not become a baseline (empty: they may)."""
    reasons: list[str] = []
    if frame.empty:
        return ["the run has no results"]
    broken = frame[frame["error_kind"].isin(CONFORMANCE_KINDS)]
    if len(broken):
        first = broken.iloc[0]
        reasons.append(
            f"{len(broken)} episode(s) failed conformance (e.g. {first['adapter']} / {first['case_id']}: "
            f"{str(first['reason'])[:120]})"
        )
    for (source, adapter, model), group in frame.groupby(["source", "adapter", "model"], sort=True):
        key = row_key(str(source), str(adapter), str(model))
        n = len(group)
        # The adapter's own refusal of a schema it cannot express is a measured, deterministic
        # outcome; the threshold is about faults (transport, provider, timeouts).
        errors = int((group["error"] & (group["error_kind"] != "refused")).sum())
        if errors / n > thresholds.max_error_rate:
            reasons.append(
                f"{key}: {errors}/{n} episodes ended in an error ({errors / n:.0%}, above "
                f"--max-error-rate {thresholds.max_error_rate:.0%})"
            )
        malformed = int(group["malformed"].sum())
        if malformed / n > thresholds.max_malformed_rate:
            reasons.append(
                f"{key}: {malformed}/{n} episodes had malformed calls ({malformed / n:.0%}, above "
                f"--max-malformed-rate {thresholds.max_malformed_rate:.0%})"
            )
        if source in DETERMINISTIC_SOURCES:
            # A perfect model's answers score correct unless the adapter itself refused the tools.
            wrong = group[group["correct"].eq(False) & (group["error_kind"] != "refused")]
            if len(wrong):
                shown = ", ".join(wrong["case_id"].astype(str).head(5))
                reasons.append(
                    f"{key}: emulated row below its exact value: {len(wrong)} case(s) wrong ({shown}): "
                    "a pipeline bug, not a baseline"
                )
    return reasons


def update(
    old: Baseline | None, frame: pd.DataFrame, *, case_set: str, run: str, all_cases: bool
) -> tuple[Baseline, list[str]]:
    """The baseline after taking this run's rows, and the lines of what changed.

    Only the rows the run ran change; within a row, a run of every case replaces the row's
    cases, a run of some cases replaces only those.
    """
    if old is not None and old.case_set != case_set:
        raise UserError(
            f"the baseline is for case set {old.case_set!r} and this run used {case_set!r}: "
            "pass --baseline with that case set's own baseline file"
        )
    rows = {key: dict(cases) for key, cases in (old.rows if old else {}).items()}
    diff: list[str] = []
    for key, cases in sorted(codes_by_row(frame).items()):
        before = rows.get(key)
        after = dict(cases) if all_cases or before is None else {**before, **cases}
        rows[key] = after
        diff.extend(_row_diff(key, before, after))
    return Baseline(case_set=case_set, rows=rows, run=run), diff


def _row_diff(key: str, before: Mapping[str, str] | None, after: Mapping[str, str]) -> Iterable[str]:
    if before is None:
        good, n = Baseline("", {key: dict(after)}).counts(key, "accuracy")
        yield f"+ {key}: new row, {len(after)} cases, accuracy {good}/{n}"
        return
    changed = [case for case in sorted(set(before) | set(after)) if before.get(case) != after.get(case)]
    if not changed:
        return
    yield f"~ {key}: {len(changed)} case(s) changed"
    for case in changed[:20]:
        yield f"    {case}: {before.get(case, 'absent')} -> {after.get(case, 'absent')}"
    if len(changed) > 20:
        yield f"    ... and {len(changed) - 20} more"
