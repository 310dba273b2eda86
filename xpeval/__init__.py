"""xpeval: cross-provider conformance and evaluation for LLM tool calling.

The public API, one import name (docs/ARCHITECTURE.md, "One import name"):

    from xpeval import SuiteConfig, run_suite, load_run
    outcome = run_suite(SuiteConfig(categories=("simple",)))     # what `xpeval run` does
    outcome.passed, outcome.scorecard, outcome.gate.failures
    run = load_run("reports/results.jsonl"); run.frame            # what notebooks read
    report = evaluate("reports/results.jsonl", GateOptions())     # what `xpeval gate` does: the
    report.passed, report.failures                                # file checked whole, then judged

The provider boundary (the adapter registry, the canonical contract) is `xpeval.adapters`; the
scorecard tables are `xpeval.evals.verdict.scorecard`. Names are imported when first used, so
`import xpeval` imports no SDK and no pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "SuiteConfig": "xpeval.evals.running.suite",
    "SuiteOutcome": "xpeval.evals.running.suite",
    "run_suite": "xpeval.evals.running.suite",
    "LoadedRun": "xpeval.evals.results.load",
    "load_run": "xpeval.evals.results.load",
    "GateReport": "xpeval.evals.verdict.gate",
    "RunScope": "xpeval.evals.verdict.gate",
    "evaluate": "xpeval.evals.verdict.file_gate:gate_file",
    "GateOptions": "xpeval.evals.verdict.file_gate",
    "update_baseline": "xpeval.evals.verdict.file_gate",
    "Baseline": "xpeval.evals.verdict.baseline",
    "read_baseline": "xpeval.evals.verdict.baseline",
    "Case": "xpeval.evals.cases",
    "load_cases": "xpeval.evals.cases",
    "Mode": "xpeval.evals.cassettes",
    "UserError": "xpeval.errors",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.errors import UserError as UserError
    from xpeval.evals.cases import Case as Case
    from xpeval.evals.cases import load_cases as load_cases
    from xpeval.evals.cassettes import Mode as Mode
    from xpeval.evals.results.load import LoadedRun as LoadedRun
    from xpeval.evals.results.load import load_run as load_run
    from xpeval.evals.running.suite import SuiteConfig as SuiteConfig
    from xpeval.evals.running.suite import SuiteOutcome as SuiteOutcome
    from xpeval.evals.running.suite import run_suite as run_suite
    from xpeval.evals.verdict.baseline import Baseline as Baseline
    from xpeval.evals.verdict.baseline import read_baseline as read_baseline
    from xpeval.evals.verdict.file_gate import GateOptions as GateOptions
    from xpeval.evals.verdict.file_gate import gate_file as _gate_file
    from xpeval.evals.verdict.file_gate import update_baseline as update_baseline
    from xpeval.evals.verdict.gate import GateReport as GateReport
    from xpeval.evals.verdict.gate import RunScope as RunScope

    evaluate = _gate_file  # `xpeval.evaluate` is the gate over a results file (`gate_file`)
