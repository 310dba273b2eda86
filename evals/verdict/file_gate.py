"""The gate over a results file, as one library call: what `xpeval gate` decides, and the baseline
it writes from a good run (`xpeval gate --update-baseline`).

    report = gate_file("reports/results.jsonl", GateOptions())     # xpeval.evaluate
    report.passed, report.failures

A results file is evidence, not a verdict (docs/ARCHITECTURE.md, "A verdict fails closed"), so
nothing here judges one before every check has held, in this order:

1. the options: contradicting ones and fractions out of range, one line each;
2. completeness: the run finished and every planned episode has its final row
   (`LoadedRun.check_complete`);
3. custody: each final row scored again from its calls on the project's cases (never a folder the
   header names), nothing spliced in, a replay's sources vouched for by its cassettes
   (`xpeval.evals.verdict.custody`);
4. no refused plugin's adapter among the rows;
5. the baseline: the one given, else the project's `[tool.xpeval]` baseline for its own cases,
   else the case set's default (`default_baseline`); missing, unreadable or of another case set
   is an input error, never a conformance-only pass (only `no_baseline` asks for that);
6. the verdict (`xpeval.evals.verdict.gate.evaluate`, pure), against the baseline or a reference
   row.

`update_baseline` goes through 1-4 and writes a baseline only from a good run: not from one with
conformance failures or too many errors, nor from one the gate fails against the baseline it
replaces unless its regressions are accepted by name (`accept_regressions`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xpeval.errors import UserError
from xpeval.evals.results.evidence import BUILTIN_CASE_SET, CaseSet, project_case_set
from xpeval.evals.results.rows import RunHeader
from xpeval.evals.verdict.baseline import (
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MAX_MALFORMED_RATE,
    Baseline,
    Thresholds,
    read_baseline,
    refusals,
    update,
)
from xpeval.evals.verdict.gate import (
    GateReport,
    RunScope,
    accepted_regressions,
    baseline_for_run,
    evaluate,
    rows_of_run,
)
from xpeval.evals.verdict.paired_test import ALPHA

if TYPE_CHECKING:
    from xpeval.evals.project import ProjectSettings
    from xpeval.evals.results.load import LoadedRun
    from xpeval.evals.verdict.reference import Verdict

DEFAULT_BASELINE = Path("reports/baseline.json")
CASE_DIR_BASELINE = "baseline.json"
"""A case folder's own baseline lives in the folder (the loader reads only case files)."""
CONFORMANCE_ONLY = "conformance only: no baseline compared"
"""What a verdict rests on when no baseline was compared (said in its verdict line)."""


@dataclass(frozen=True)
class GateOptions:
    """What the gate is asked: the flags of `xpeval gate`, as data."""

    baseline: Path | None = None
    """None: the project's `[tool.xpeval]` baseline for its cases, else the case set's default."""
    no_baseline: bool = False
    """Judge on conformance only, said in the verdict line."""
    tolerance: float = 0.0
    """Also fail a rate that drops by more than this on the shared cases (0: the paired test only)."""
    alpha: float = ALPHA
    """The family-wise error rate of the paired tests (Holm)."""
    case_dir: Path | None = None
    """The cases the run played (None: the project's `[tool.xpeval]` cases, else the built-in ones)."""
    root: Path | None = None
    """Where the project is looked for (None: the current folder)."""
    reference: str | None = None
    """`ADAPTER=MODEL`: judge every row against this row instead of a baseline."""
    against: Path | None = None
    """The results file the reference row comes from (None: the judged file)."""
    min_f1: float | None = None
    min_agreement: float | None = None
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    """`update_baseline` refuses a row with more errors than this."""
    max_malformed_rate: float = DEFAULT_MAX_MALFORMED_RATE
    """`update_baseline` refuses a row with more malformed calls than this."""
    accept_regressions: bool = False
    """`update_baseline` writes from a run the gate fails, naming every flipped case it accepts."""

    def check(self, *, updating: bool = False) -> None:
        """One line for options that contradict each other or are out of range."""
        if self.reference and (updating or self.no_baseline or self.baseline):
            raise UserError(
                "--reference judges against a reference row, not a baseline: drop the baseline flags"
            )
        if self.accept_regressions and not updating:
            raise UserError("--accept-regressions only goes with --update-baseline")
        if updating and self.no_baseline:
            raise UserError("--update-baseline writes a baseline: it cannot go with --no-baseline")
        if self.no_baseline and self.baseline is not None:
            raise UserError("--no-baseline and --baseline contradict each other: pass one")
        _check_fractions(self, ("tolerance", "alpha", "max_error_rate", "max_malformed_rate"))


def _check_fractions(options: GateOptions, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(options, name)
        if value is not None and not 0 <= value <= 1:
            raise UserError(f"--{name.replace('_', '-')} must be between 0 and 1, got {value:g}")


@dataclass(frozen=True)
class BaselineUpdate:
    """What `update_baseline` wrote and why."""

    path: Path
    baseline: Baseline
    changes: list[str]
    """One line per row that changed (empty: nothing did)."""
    accepted: list[str] = field(default_factory=list)
    """The regressions accepted by name (`accept_regressions`), one line each."""


@dataclass(frozen=True)
class _Evidence:
    """A results file that passed every check before a verdict: complete, in custody, of the
    project's cases and no refused plugin's."""

    run: LoadedRun
    scope: RunScope
    cases: CaseSet
    project: ProjectSettings
    baseline_path: Path


def gate_file(results: str | Path | None = None, options: GateOptions | None = None) -> GateReport:
    """The gate's verdict on the results file `results` (None: the project's), as `xpeval gate`
    gives it; a `UserError` (one line) when the file cannot be judged: incomplete, out of
    custody, cases that differ from the project's, a baseline missing or of another case set."""
    options = options or GateOptions()
    if not isinstance(results, (str, Path, type(None))):
        raise UserError(
            f"the gate judges a results file, given by its path, not a {type(results).__name__}: "
            "its header and completion record are the evidence it checks"
        )
    options.check()
    evidence = _evidence(results, options)
    frame, scope = evidence.run.frame, evidence.scope
    if options.reference:
        return _against_reference(evidence, options)
    if options.no_baseline:
        report = evaluate(frame, None, scope)
        report.basis = f"{CONFORMANCE_ONLY}, --no-baseline"
        return report
    path = evidence.baseline_path
    compared = baseline_for_run(read_baseline(path), scope, path)
    return evaluate(frame, compared, scope, tolerance=options.tolerance, alpha=options.alpha)


def update_baseline(results: str | Path | None = None, options: GateOptions | None = None) -> BaselineUpdate:
    """Write the baseline from the results file `results` (None: the project's) when it is a good
    run: refused (a `UserError`) for a run with conformance failures or too many errors, and for
    one the gate fails against the baseline it replaces unless `options.accept_regressions`."""
    options = options or GateOptions()
    options.check(updating=True)
    evidence = _evidence(results, options)
    run, scope, path = evidence.run, evidence.scope, evidence.baseline_path
    frame = run.frame
    problems = refusals(frame, Thresholds(options.max_error_rate, options.max_malformed_rate))
    if problems:
        raise UserError("not writing a baseline from this run: " + "; ".join(problems))
    old = read_baseline(path) if path.exists() or path.is_symlink() else None
    accepted: list[str] = []
    if old is not None and old.case_set == scope.case_set:
        report = evaluate(
            frame, rows_of_run(old, scope), scope, tolerance=options.tolerance, alpha=options.alpha
        )
        if not report.passed:
            accepted = accepted_regressions(report)
            if not options.accept_regressions:
                raise UserError(
                    f"not writing a baseline from a run the gate fails against {path}: "
                    f"{len(report.failures)} problem(s), {len(accepted)} to accept (see `xpeval gate`); "
                    "pass --accept-regressions to accept them by name"
                )
    new, changes = update(old, frame, case_set=scope.case_set, run=run.header.run, all_cases=scope.all_cases)
    new.write(path)
    return BaselineUpdate(path, new, changes, accepted)


def _evidence(results: str | Path | None, options: GateOptions) -> _Evidence:
    """The results file read, and every check before a verdict made (the module's steps 2-5)."""
    from xpeval.adapters.registry import refuse_if_refused_plugin_in_use
    from xpeval.evals.project import project_settings
    from xpeval.evals.results.load import load_run
    from xpeval.evals.verdict.custody import check_custody

    project = project_settings(options.root)
    run = load_run(Path(results) if results is not None else project.results)
    run.check_complete()
    cases = project_case_set(project.root, options.case_dir)
    check_custody(run, project.root, cases)
    # The case set is the project's (its cases are the run's: custody checked their digests),
    # never the folder the header names: a header must not choose what the gate reads.
    scope = dataclasses.replace(scope_of(run.header), case_set=cases.label)
    path = options.baseline or project_baseline(project, scope.case_set)
    refuse_if_refused_plugin_in_use(run.frame["adapter"].unique())
    return _Evidence(run, scope, cases, project, path)


def _against_reference(evidence: _Evidence, options: GateOptions) -> GateReport:
    """Conformance and nothing-measured as always, then every row against the reference row
    instead of the baseline."""
    from xpeval.evals.verdict.reference import gate_findings

    assert options.reference is not None
    _check_fractions(options, ("min_f1", "min_agreement"))
    report = evaluate(evidence.run.frame, None, evidence.scope)
    verdicts = reference_verdicts(
        evidence.run.path,
        options.reference,
        evidence.project.root,
        evidence.cases,
        against=options.against,
        alpha=options.alpha,
        min_f1=options.min_f1,
        min_agreement=options.min_agreement,
        results_checked=True,
    )
    report.findings.extend(gate_findings(verdicts))
    report.notes.extend(f.message for f in report.findings if f.metric == "reference" and f.ok)
    report.notes.insert(0, f"judged against the reference {options.reference}, not a baseline")
    return report


def reference_verdicts(
    results: Path,
    reference: str,
    root: Path,
    cases: CaseSet,
    *,
    against: Path | None = None,
    alpha: float = ALPHA,
    min_f1: float | None = None,
    min_agreement: float | None = None,
    results_checked: bool = False,
) -> list[Verdict]:
    """Every row of `results` against the row `reference` (`ADAPTER=MODEL`, of `against` or of
    `results`) on the project's case set: what `xpeval compare` prints and `gate --reference`
    gates on. Both files are evidence, not verdicts: each must pass the chain of custody (a row
    spliced in or a second final row would change what the vendor is judged on);
    `results_checked` when the caller has checked `results` already."""
    from xpeval.evals.report.vendors import vendor_verdicts
    from xpeval.evals.results.load import load_run
    from xpeval.evals.verdict.custody import check_custody

    verdicts = vendor_verdicts(
        results,
        reference,
        cases.cases.values(),
        against=against,
        alpha=alpha,
        min_f1=min_f1,
        min_agreement=min_agreement,
    )
    # After the comparison, so that files of different case sets are told so first.
    if not results_checked:
        check_custody(load_run(results), root, cases)
    if against is not None:
        check_custody(load_run(against), root, cases)
    return verdicts


def scope_of(header: RunHeader | None) -> RunScope:
    """What a run covered, read from its results file's header (the gate needs no flags)."""
    config = header.config if header is not None else {}
    pairs = header.plan.pairs() if header is not None and header.plan is not None else set()
    return RunScope(
        adapters=frozenset(config.get("adapters") or ()),
        case_set=str(config.get("case_set") or BUILTIN_CASE_SET),
        all_cases=not config.get("some_cases"),
        pairs=frozenset(pairs) or None,
    )


def default_baseline(case_set: str, root: Path) -> Path:
    """reports/baseline.json for the built-in cases; a case folder keeps its own baseline.json."""
    if case_set == BUILTIN_CASE_SET:
        return root / DEFAULT_BASELINE
    folder = Path(case_set)
    return (folder if folder.is_absolute() else root / folder) / CASE_DIR_BASELINE


def project_baseline(project: ProjectSettings, case_set: str) -> Path:
    """The baseline a run of `case_set` is judged against when none is given: the project's
    `[tool.xpeval]` baseline for its own cases, else the case set's default."""
    configured = project.baseline if project.cases and case_set != BUILTIN_CASE_SET else None
    return configured or default_baseline(case_set, project.root)


__all__ = [
    "BaselineUpdate",
    "GateOptions",
    "default_baseline",
    "gate_file",
    "project_baseline",
    "reference_verdicts",
    "scope_of",
    "update_baseline",
]
