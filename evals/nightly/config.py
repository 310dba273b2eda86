"""What a nightly is: its own choices (adapters, models, local servers, schema probes, the
history) around the run settings it shares with `xpeval run` (a `SuiteConfig`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from xpeval.evals.running.suite import SuiteConfig
from xpeval.evals.running.targets import TargetKind

NIGHTLY_DIR = Path("reports/nightly")
DEFAULT_HISTORY = Path("reports/history")


def nightly_run_settings(reports: Path = NIGHTLY_DIR, **settings: object) -> SuiteConfig:
    """The run settings of a nightly: `xpeval run`'s, with its files under `reports` (fresh
    cassettes, the results file) unless `settings` place them elsewhere."""
    files: dict[str, object] = {
        "cassettes": reports / "cassettes",
        "results": reports / "results.jsonl",
        "reports": reports,
    }
    return SuiteConfig(**{**files, **settings})  # type: ignore[arg-type]


@dataclass(frozen=True)
class NightlyConfig:
    """Everything a nightly is: what to measure, where its files go, what it is compared with.

    `run` holds what a nightly shares with `xpeval run` (cases, concurrency, rate, retries,
    timeouts, files, baseline, tolerance, project root); the nightly decides the rest of the
    run itself (record mode, every answer fresh, each adapter's target and models)."""

    run: SuiteConfig = field(default_factory=nightly_run_settings)
    adapters: Sequence[str] = ()
    """Adapter ids (empty: every registered adapter)."""
    models: Sequence[str] = ()
    """Provider targets: `MODEL` for each or `ADAPTER=MODEL` (empty: the provider's default)."""
    local_models: Sequence[str] = ()
    """Local targets: the served models' aliases (empty: every model in `xpeval.evals.local_model.MODELS`)."""
    serve_local: bool = False
    """Start the local servers the run needs (when the extra is installed) and stop them after."""
    history: Path = DEFAULT_HISTORY
    corpus: Path | None = None
    """Tools for live schema acceptance (None: the built-in schema corpus)."""
    schemas: bool = True
    """Probe live schema acceptance for every adapter with a live provider."""
    allow_nothing: bool = False
    """Nothing to measure (no key, no local server) is a pass, not `EXIT_NOTHING`."""

    def suite_config(self, targets: Mapping[str, TargetKind], models: Sequence[str]) -> SuiteConfig:
        """The run tonight: record mode, every request sent again, each adapter's target."""
        from xpeval.evals.cassettes import Mode

        return replace(
            self.run,
            mode=Mode.RECORD,
            refresh=True,
            adapters=tuple(targets),
            models=tuple(models),
            targets=dict(targets),
        )
