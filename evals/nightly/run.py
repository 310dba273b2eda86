"""The nightly cross-provider eval as a library function: `run_nightly(NightlyConfig(...))`.

What `xpeval nightly` and `nox -s nightly` do (docs/nightly.md has the whole story):

1. **Targets.** Every registered adapter (or the ones named) gets one target: the live
   provider where its credentials are set (`xpeval.evals.running.targets.provider_ready`), else the local
   model
   where the local server serves its wire and URL shape (`xpeval.evals.running.targets.local_capable`) and a
   server runs (or is started: `serve_local`), else it is skipped, with the reason: the variables
   to set (the provider's own `key_vars`), that the local model does not serve its wire, or that
   no local server runs.
2. **The suite.** `xpeval.evals.running.suite.run_suite` in record mode with `refresh` (every answer fresh),
   each adapter's target set in `SuiteConfig.targets`, cassettes into the nightly's own folder.
3. **Live schema acceptance.** Each adapter with a live provider is sent every corpus tool once
   in a minimal request; the provider's answer (accepted, or refused with its HTTP 400 text) is
   recorded next to the offline checker's prediction for the same pair.
4. **Comparisons.** With the gate's baseline (`run_suite` already makes it, through
   `xpeval.evals.verdict.gate.baseline_for_run`/`evaluate`) and with the last good nightly of the history
   (the latest nightly whose own verdict passed), by the same paired test; live schema answers
   against the checker and against the last good nightly.
5. **History.** The run's tidy rows and its schema pairs are appended (`xpeval.evals.results.history`).

The outcome is a verdict and a summary naming, for every alert, the adapter, model, metric, the
change and the cases (or tools) that flipped. Exit codes: `EXIT_PASSED`, `EXIT_ALERTS`,
`EXIT_NOTHING` (no adapter could be measured; `allow_nothing` makes it a pass, a choice the
caller states).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from xpeval.errors import UserError
from xpeval.evals.nightly.alerts import Alert, finding_alerts, schema_alerts
from xpeval.evals.nightly.config import NightlyConfig
from xpeval.evals.nightly.outcome import NightlyOutcome, write_reports
from xpeval.evals.nightly.plan import plan_nightly
from xpeval.evals.nightly.schema_probes import ProbeUpstream, probe_schemas, probes_frame
from xpeval.evals.nightly.servers import InstalledServers, LocalServers
from xpeval.evals.results.load import FRAME_COLUMNS, LoadedRun
from xpeval.evals.running.suite import Log, run_suite
from xpeval.evals.verdict.baseline import update
from xpeval.evals.verdict.file_gate import scope_of
from xpeval.evals.verdict.gate import RunScope, evaluate, rows_of_run
from xpeval.evals.verdict.paired_test import ALPHA


def _last_good_comparison(
    config: NightlyConfig, loaded: LoadedRun, scope: RunScope, frame: pd.DataFrame
) -> tuple[list[Alert], list[str], list[str], str | None]:
    """(alerts, notes, compared lines, last good run) of this run against the last good nightly."""
    from xpeval.evals.results.history import last_good, load_history

    case_set = scope.case_set
    last = last_good(config.history, kind="nightly", case_set=case_set)
    if last is None:
        return (
            [],
            [f"no earlier good nightly of case set {case_set!r} in {config.history}: not compared"],
            [],
            None,
        )
    rows = load_history(config.history, run=last)
    before, _ = update(None, rows[FRAME_COLUMNS], case_set=case_set, run=last, all_cases=True)
    compared = rows_of_run(before, scope)
    # The gate's own test at the gate's own level (`xpeval.evals.verdict.paired_test.ALPHA`), as run_suite
    # judges the baseline.
    report = evaluate(frame, compared, scope, tolerance=config.run.tolerance, alpha=ALPHA)
    against = f"last good nightly {last}"
    alerts = finding_alerts(report, compared, frame, against, rates_only=True)
    # Cases or rows the last good night had and this one has not (a case removed, a key not set
    # tonight) are said, not alerted: the gate's baseline is what requires them.
    notes = [f"vs {against}: {f.message}" for f in report.failures if f.metric in ("present", "cases")]
    notes += [f"vs {against}: {note}" for note in report.notes if "not in the baseline" not in note]
    return alerts, notes, [f"{against} ({str(rows['run_date'].iloc[0])[:10]})"], last


def run_nightly(
    config: NightlyConfig,
    *,
    log: Log = lambda line: None,
    progress: Callable[[int], Any] | None = None,
    servers: LocalServers | None = None,
    probe_upstream: ProbeUpstream | None = None,
    dry_run: bool = False,
) -> NightlyOutcome:
    """The nightly: targets, the suite, live schema acceptance, comparisons, history.

    `servers` answers for the local model servers (default: the installed ones); `probe_upstream`
    gives each schema probe its transport (default: the provider, over one pool per adapter).
    `dry_run` plans only: the outcome says what would be measured and what is skipped."""
    servers = servers or InstalledServers()
    plan = plan_nightly(config, servers)
    outcome = NightlyOutcome(plan=plan, allow_nothing=config.allow_nothing, dry_run=dry_run)
    suite_config = config.suite_config(
        {t.adapter: t.kind for t in plan.measured if t.kind}, plan.suite_models()
    )
    suite_config.validate()
    if dry_run or outcome.nothing:
        return outcome
    for target in plan.skipped:
        log(f"{target.adapter}: skipped: {target.reason}")
    up = {alias for t in plan.measured if t.kind == "local-model" for alias in t.models}
    try:
        for alias in plan.start:
            log(f"starting the local model server of {alias} (--serve-local)")
            servers.start(alias)
            outcome.started.append(alias)
        suite = run_suite(suite_config, log=log, progress=progress, local_model_up=lambda m: _served(m) in up)
    finally:
        for alias in reversed(outcome.started):
            try:
                servers.stop(alias)
            except UserError as exc:  # one that will not stop must not hide the others, or the run's error
                log(f"could not stop the local model server of {alias}: {exc}")
                continue
            log(f"stopped the local model server of {alias}")
    outcome.suite = suite
    outcome.run = suite.results.run_id
    # What the suite read and judged, judged again here: no file is read a second time.
    assert suite.run is not None, "run_suite hands back the results it judged"
    loaded = suite.run
    scope = scope_of(loaded.header)
    baseline_path = suite_config.baseline_path()
    outcome.alerts += finding_alerts(suite.gate, suite.baseline, suite.frame, f"baseline {baseline_path}")
    outcome.notes += [f"vs baseline {baseline_path}: {note}" for note in suite.gate.notes]
    outcome.compared.append(f"baseline {baseline_path}")
    alerts, notes, compared, last = _last_good_comparison(config, loaded, scope, suite.frame)
    outcome.alerts += alerts
    outcome.notes += notes
    outcome.compared += compared
    if plan.tools:
        live = sum(t.kind == "provider" for t in plan.measured)
        log(f"live schema acceptance: {len(plan.tools)} tools x {live} live adapter(s)")
        outcome.probes = probe_schemas(plan.measured, plan.tools, config.run, upstream=probe_upstream)
        from xpeval.evals.results.history import load_schema_history

        before = load_schema_history(config.history, run=last) if last else None
        alerts, notes = schema_alerts(outcome.probes, before, last)
        outcome.alerts += alerts
        outcome.notes += notes
        outcome.compared.append("the offline acceptance checker (xpeval.evals.acceptance.measure)")
    from xpeval.evals.results.history import append

    pairs = probes_frame(outcome.probes) if outcome.probes else None
    outcome.history_file = append(
        config.history, loaded, kind="nightly", passed=outcome.passed, schema_pairs=pairs
    )
    write_reports(config.run.reports, outcome)
    return outcome


def _served(model: str | None) -> str:
    from xpeval.evals.local_model import MODEL_ALIAS

    return model or MODEL_ALIAS
