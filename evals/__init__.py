"""Everything that measures: the suite as a library, its results, the gate.

    from evals import SuiteConfig, run_suite, load_run
    outcome = run_suite(SuiteConfig(categories=("simple",)))     # what `xpeval run` does
    outcome.passed, outcome.scorecard, outcome.gate.failures
    run = load_run("reports/results.jsonl"); run.frame            # what notebooks read
    from evals.scorecard import scorecard; scorecard(run.frame)    # the scorecard table

(The scorecard functions are not re-exported here: `evals.scorecard` is their module's name.)

Names are imported when first used, so `import evals` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "SuiteConfig": "evals.suite",
    "SuiteOutcome": "evals.suite",
    "run_suite": "evals.suite",
    "LoadedRun": "evals.load",
    "load_frame": "evals.load",
    "load_run": "evals.load",
    "GateReport": "evals.gate",
    "RunScope": "evals.gate",
    "evaluate": "evals.gate",
    "Baseline": "evals.baseline",
    "read_baseline": "evals.baseline",
    "Case": "evals.cases",
    "load_cases": "evals.cases",
    "Mode": "evals.cassettes",
    "UserError": "evals.errors",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from evals.baseline import Baseline, read_baseline
    from evals.cases import Case, load_cases
    from evals.cassettes import Mode
    from evals.errors import UserError
    from evals.gate import GateReport, RunScope, evaluate
    from evals.load import LoadedRun, load_frame, load_run
    from evals.suite import SuiteConfig, SuiteOutcome, run_suite


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evals' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
