"""The run pipeline as a library function: plan, say where answers come from, play, score, gate.

`run_suite(SuiteConfig(...))` is what `xpeval run` does; the CLI only turns flags into a
`SuiteConfig` and prints. A notebook or another tool gets the same results and verdict:

    outcome = run_suite(SuiteConfig(adapters=("openai-chat",), categories=("simple",)))
    outcome.passed, outcome.scorecard, outcome.gate.failures
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from xpeval.adapters.registry import (
    adapter_ids,
    create_adapter,
    ensure_loaded,
    refuse_if_refused_plugin_in_use,
    select_adapters,
)
from xpeval.errors import AdapterFactoryError, UserError
from xpeval.evals.cases import CATEGORIES, Case, load_cases
from xpeval.evals.cases.loader import BUILTIN_DIR
from xpeval.evals.cassettes import CassetteStore, Mode
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.load import LoadedRun, load_run
from xpeval.evals.results.rows import RunHeader, new_run_id, now_iso, settings_fingerprint
from xpeval.evals.results.run_plan import CASE_DIGESTS, RunPlan, Shard, case_digests
from xpeval.evals.running.plan import PlannedEpisode, parse_models, plan, select_cases
from xpeval.evals.running.runner import Progress, Runner, RunSettings
from xpeval.evals.running.targets import (
    Emulator,
    EpisodeFactory,
    StreamPolicy,
    TargetChoice,
    TargetKind,
    TargetPicker,
    default_model,
    describe_target,
)
from xpeval.evals.verdict.baseline import Baseline, read_baseline, split_key
from xpeval.evals.verdict.file_gate import CONFORMANCE_ONLY, default_baseline, scope_of
from xpeval.evals.verdict.gate import GateReport, RunScope, baseline_for_run, evaluate, headline
from xpeval.evals.verdict.scorecard import refusal_explanations, scorecard, write_scorecard

BUILTIN_CASE_SET = "builtin"
DEFAULT_RESULTS = Path("reports/results.jsonl")
DEFAULT_REPORTS = Path("reports")

Log = Callable[[str], None]


@dataclass(frozen=True)
class SuiteConfig:
    """Everything a run is: what to play, against what, and where its files go."""

    mode: Mode = Mode.REPLAY
    adapters: Sequence[str] = ()
    """Adapter ids (empty: every registered adapter)."""
    models: Sequence[str] = ()
    """`MODEL` for every adapter or `ADAPTER=MODEL` (empty: recorded, else the adapter's default)."""
    cases: Sequence[str] = ()
    """Case ids or globs (empty: all)."""
    categories: Sequence[str] = ()
    case_dir: Path | None = None
    shard: str | None = None
    target: TargetChoice = "auto"
    targets: Mapping[str, TargetKind] = field(default_factory=dict)
    """Record/live: a target for single adapters, winning over `target` (the nightly's choice)."""
    local_model_url: str | None = None
    """Record/live: the local-model target is the team's own OpenAI-compatible server at this URL
    (docs/local-model.md, "Your own server"); None: the bundled servers."""
    allow_emulator: bool = False
    strict_emulator: bool = False
    """The emulator target answers as a provider with reasoning on (its replies carry each wire's
    reasoning state, and a request that loses it is refused: docs/provider-loop-rules.md)."""
    refresh: bool = False
    """Record mode: send every request again and rewrite its cassette (not only new ones)."""
    repeat: int = 1
    """Play each case this many times (trials; each its own cassette when recorded)."""
    stream: StreamPolicy = "alternate"
    batch: bool = False
    """Record/live: episodes go through the providers' Batch APIs, a multi-turn episode's turns as
    successive batches (docs/batch.md)."""
    batch_poll: float = 30.0
    """Seconds before a batch's first poll (doubling up to `xpeval.evals.batch.session.POLL_CAP`)."""
    emulator_url: str | None = None
    """The emulator target is an emulator already running at this loopback URL."""
    concurrency: int = 4
    rate: float | None = None
    retries: int = 2
    timeout: float = 60.0
    cassettes: Path = Path("cassettes")
    results: Path = DEFAULT_RESULTS
    reports: Path = DEFAULT_REPORTS
    baseline: Path | None = None
    """None: the case set's default (reports/baseline.json, or the case folder's baseline.json)."""
    no_baseline: bool = False
    """Gate on conformance only, said in the verdict (`--no-baseline`)."""
    tolerance: float = 0.0
    root: Path = Path(".")
    """The project root: a case folder is named relative to it (the case set's label)."""

    def validate(self) -> None:
        """One clear line for every setting out of range (before anything starts)."""
        if self.concurrency < 1 or self.concurrency > 1000:
            raise UserError(f"--concurrency must be between 1 and 1000, got {self.concurrency}")
        if self.rate is not None and not self.rate > 0:
            raise UserError(f"--rate must be a positive number of requests per second, got {self.rate:g}")
        if not self.timeout > 0:
            raise UserError(f"--timeout must be a positive number of seconds, got {self.timeout:g}")
        if self.repeat < 1 or self.repeat > 100:
            raise UserError(f"--repeat must be between 1 and 100, got {self.repeat}")
        if self.retries < 0 or self.retries > 20:
            raise UserError(f"--retries must be between 0 and 20, got {self.retries}")
        self._validate_batch()
        if not 0 <= self.tolerance < 1:
            raise UserError(f"--tolerance must be between 0 and 1, got {self.tolerance:g}")
        unknown = [c for c in self.categories if c not in CATEGORIES]
        if unknown:
            raise UserError(f"unknown --categories {', '.join(unknown)} (known: {', '.join(CATEGORIES)})")
        if self.reports.exists() and not self.reports.is_dir():
            raise UserError(f"--reports {self.reports} is a file, not a folder")
        if self.results.exists() and self.results.is_dir():
            raise UserError(f"--results {self.results} is a folder, not a results file")

    def _validate_batch(self) -> None:
        if self.batch and self.mode is Mode.REPLAY:
            raise UserError(
                "--batch asks providers through their Batch APIs; a replay asks no one (--mode record)"
            )
        if self.batch and self.stream == "always":
            raise UserError(
                "--batch with --stream always: Batch APIs do not stream (docs/batch.md); drop one"
            )
        if not self.batch_poll > 0:
            raise UserError(f"--batch-poll must be a positive number of seconds, got {self.batch_poll:g}")

    @property
    def case_set(self) -> str:
        return BUILTIN_CASE_SET if self.case_dir is None else project_label(self.case_dir, self.root)

    @property
    def some_cases(self) -> bool:
        return bool(self.cases or self.categories or self.shard)

    def baseline_path(self) -> Path:
        if self.baseline is not None:
            return self.baseline
        return default_baseline(self.case_set, self.root)


def project_label(path: Path, root: Path) -> str:
    """A folder's name in results headers and baselines (a case folder, the cassettes): relative
    to the project root, so the same on every machine and checkout (shards merge), else as given."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass
class SuitePlan:
    adapters: list[str]
    cases: list[Case]
    episodes: list[PlannedEpisode]
    targets: dict[str, TargetKind]
    lines: list[str]
    run_plan: RunPlan
    """Where each adapter's answers come from, one line each (said before the run starts)."""


@dataclass
class SuiteOutcome:
    """What a run produced: its results, scorecard, report files and the gate's verdict."""

    results: ResultsFile
    frame: pd.DataFrame
    scorecard: pd.DataFrame
    gate: GateReport
    paths: dict[str, Path]
    plan: SuitePlan
    resumed: int = 0
    run: LoadedRun | None = None
    """The results file as the gate read it (header, final rows), for callers that judge it again."""
    baseline: Baseline | None = None
    """The baseline rows the gate compared with (None: no baseline)."""

    @property
    def passed(self) -> bool:
        return self.gate.passed


def plan_suite(
    config: SuiteConfig, picker: TargetPicker, store: CassetteStore, baseline: Baseline | None = None
) -> SuitePlan:
    """The episodes of a run and where each adapter's answers come from (no request is sent).

    A replay plays every model recorded for an adapter, and every model its baseline rows
    name: cassettes that disappeared are a failure, not a smaller run."""
    config.validate()
    named = select_adapters(config.adapters, named_by="the run's adapters")
    adapters = named or adapter_ids()
    refuse_if_refused_plugin_in_use(named or None)  # none named: all, the refused too
    cases = _cases(config)
    models = parse_models(list(config.models), adapters)
    if config.mode is Mode.REPLAY:
        models = _replayed_models(models, store, baseline)
        targets: dict[str, TargetKind] = {}
        if not any(store.models(a) for a in adapters):
            _refuse_unbuildable(adapters)  # a plugin that cannot build its adapter says so first
            raise UserError(
                f"nothing to replay: {store.root} holds no cassette of {_few(adapters)}; record some with "
                "`xpeval run --mode record` (a provider's key, `--target local-model`, or `--target "
                "emulator` for a pipeline check), or run from the project whose pyproject.toml has "
                "[tool.xpeval]"
            )
        lines = [_replay_line(store, a, models[a], cases) for a in adapters]
    else:
        targets = picker.check(adapters, models)
        models = {a: [m or default_model(a, targets[a]) for m in ms] for a, ms in models.items()}
        lines = [
            describe_target(a, targets[a], ", ".join(str(m) for m in models[a]), picker.local_url)
            for a in adapters
        ]
    shard = Shard.parse(config.shard) if config.shard else None
    episodes = plan(cases, adapters, models, shard, config.repeat)
    if not episodes:
        raise UserError(f"shard {config.shard} holds no episode of this selection")
    return SuitePlan(
        adapters=adapters,
        cases=cases,
        episodes=episodes,
        targets=targets,
        lines=lines,
        run_plan=RunPlan.of([c.id for c in cases], models, shard, config.repeat),
    )


def _cases(config: SuiteConfig) -> list[Case]:
    loaded = load_cases(config.case_dir or BUILTIN_DIR)
    if not loaded:
        raise UserError(f"{config.case_dir}: no case files (*.yaml, *.yml, *.jsonl) in the folder")
    return select_cases([item.case for item in loaded], list(config.cases), list(config.categories))


def _replayed_models(
    models: dict[str, list[str | None]], store: CassetteStore, baseline: Baseline | None
) -> dict[str, list[str | None]]:
    """Adapters without named models replay every model recorded for them and every model their
    baseline rows name (cassettes that disappeared are a failure, not a smaller run)."""
    baselined = [split_key(key)[1:] for key in (baseline.rows if baseline else {})]
    out: dict[str, list[str | None]] = {}
    for adapter_id, named in models.items():
        if named != [None]:
            out[adapter_id] = named
            continue
        expected = {m for a, m in baselined if a == adapter_id}
        out[adapter_id] = list(sorted({*store.models(adapter_id), *expected})) or [None]
    return out


def _refuse_unbuildable(adapters: Sequence[str]) -> None:
    """A plugin's factory that cannot build its adapter, named as the plugin's
    (`AdapterFactoryError`); anything else building one fails later where it is used."""
    for adapter_id in adapters:
        try:
            create_adapter(adapter_id)
        except AdapterFactoryError:
            raise
        except Exception:  # e.g. no credentials: not what a replay needs
            continue


def _few(names: Sequence[str], shown: int = 3) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _replay_line(
    store: CassetteStore, adapter_id: str, models: Sequence[str | None], cases: list[Case]
) -> str:
    """Where a replayed adapter's answers come from: its cassettes, counted by recorded source."""
    parts = []
    for model in models:
        if model is None:
            continue
        sources: dict[str, int] = {}
        for case in cases:
            label: str
            try:
                meta = store.meta(store.path(adapter_id, case.id, model))
                label = meta.source if meta is not None else "missing"
            except UserError:  # the episode fails naming the file and why
                label = "unreadable"
            sources[label] = sources.get(label, 0) + 1
        counted = ", ".join(f"{n} {source}" for source, n in sorted(sources.items()))
        parts.append(f"{model}: {counted}")
    if not parts:
        return f"{adapter_id}: replay, but {store.root / adapter_id} holds no cassette"
    return f"{adapter_id}: replay cassettes ({'; '.join(parts)})"


def _header(config: SuiteConfig, suite: SuitePlan) -> RunHeader:
    settings: dict[str, Any] = {
        "mode": config.mode.value,
        "case_set": config.case_set,
        "some_cases": config.some_cases,
        "adapters": suite.adapters,
        "models": list(config.models),
        "cases": [case.id for case in suite.cases],
        CASE_DIGESTS: case_digests(suite.cases),
        "shard": config.shard,
        "target": config.target,
        "targets": dict(config.targets),
        "stream": config.stream,
        "refresh": config.refresh,
        "repeat": config.repeat,
        "cassettes": project_label(config.cassettes, config.root),
    }
    if config.strict_emulator:  # named only when on: every other run's fingerprint is as it was
        settings["strict_emulator"] = True
    if config.batch:  # likewise
        settings["batch"] = True
    run_fingerprint = settings_fingerprint(settings)
    started = now_iso()
    return RunHeader(
        run=new_run_id(started, run_fingerprint),
        fingerprint=run_fingerprint,
        started_at=started,
        config=settings,
        plan=suite.run_plan,
    )


def run_suite(
    config: SuiteConfig,
    *,
    log: Log = lambda line: None,
    progress: Callable[[int], Any] | None = None,
    local_model_up: Callable[[str | None], bool] | None = None,
    emulator: Emulator | None = None,
) -> SuiteOutcome:
    """Run the suite: every planned episode, the scorecard files, the gate's verdict.

    `log` receives the lines a user should see (where answers come from, resuming); `progress`
    is called with the number of episodes to play and returns a context manager with
    `advance(row)` (the CLI's progress bar). `emulator` answers the emulator target (default:
    a loopback emulator giving a perfect model's answers, started for the run).
    """
    ensure_loaded()  # xpeval's adapters and wires, and every installed plugin's
    store = CassetteStore(config.cassettes)
    picker = TargetPicker(
        choice=config.target,
        local_model_up=local_model_up or _local_model_up,
        allow_emulator=config.allow_emulator,
        per_adapter=dict(config.targets),
        local_url=config.local_model_url,
    )
    baseline, unbased = _baseline_of(config)
    suite = plan_suite(
        config, picker, store, baseline if baseline and baseline.case_set == config.case_set else None
    )
    if baseline is None and config.mode is Mode.REPLAY and not config.no_baseline:
        raise UserError(unbased)  # after the plan: a case folder without cases says that first
    for line in suite.lines:
        log(line)
    results = ResultsFile.open_for(config.results, _header(config, suite))
    runner_settings = RunSettings(
        concurrency=config.concurrency,
        rate=config.rate,
        max_attempts=config.retries + 1,
        episode_timeout=config.timeout * 8,
    )
    try:
        resumed = _play(config, suite, store, picker, results, runner_settings, log, progress, emulator)
    except BaseException:
        results.close()  # every row played so far reaches the file: the run resumes from there
        raise
    results.finish()
    loaded = load_run(results.path)
    frame = loaded.frame
    card = scorecard(frame)
    scope = scope_of(results.header)
    compared, unbased = _compared(config, baseline, scope, unbased)
    report = evaluate(frame, compared, scope, tolerance=config.tolerance)
    if unbased:
        report.notes.insert(0, unbased)
        report.basis = CONFORMANCE_ONLY
    paths = write_scorecard(frame, config.reports, headline(report), card)
    log(f"{len(frame)} episodes; scorecard: {paths['md']}")
    for _, explained in refusal_explanations(frame):
        log(explained)
    return SuiteOutcome(results, frame, card, report, paths, suite, resumed, loaded, compared)


def _baseline_of(config: SuiteConfig) -> tuple[Baseline | None, str | None]:
    """The baseline the run is judged against, or None with why. A replay (the CI job) is judged
    against its baseline, so a missing one is an input error there; a run that records or goes
    live may be a project's first, and says how to write one."""
    if config.no_baseline:
        return None, "--no-baseline: gated on conformance only"
    path = config.baseline_path()
    if path.exists() or path.is_symlink():
        return read_baseline(path), None
    if config.mode is Mode.REPLAY:
        return None, (
            f"baseline {path} does not exist: a replay is judged against its baseline (pass --no-baseline "
            "to gate on conformance only; `xpeval gate --update-baseline` then writes one from that run)"
        )
    return None, (
        f"no baseline at {path} yet: gated on conformance only (after a good run, "
        "`xpeval gate --update-baseline` writes it from that run's results)"
    )


def _compared(
    config: SuiteConfig, baseline: Baseline | None, scope: RunScope, unbased: str | None
) -> tuple[Baseline | None, str | None]:
    """The baseline rows the run is compared with. A replay fails closed on a baseline of another
    case set or without a row of the run; a run that records or goes live is compared on
    conformance only then, saying why (a new adapter's first recording has no baseline row)."""
    if baseline is None:
        return None, unbased
    try:
        return baseline_for_run(baseline, scope, config.baseline_path()), None
    except UserError as exc:
        if config.mode is Mode.REPLAY:
            raise
        return None, f"{exc}: gated on conformance only"


def _play(
    config: SuiteConfig,
    suite: SuitePlan,
    store: CassetteStore,
    picker: TargetPicker,
    results: ResultsFile,
    settings: RunSettings,
    log: Log,
    progress: Callable[[int], Any] | None,
    emulator: Emulator | None,
) -> int:
    server = None
    owned: Any = None
    if emulator is None and config.mode is not Mode.REPLAY and "emulator" in suite.targets.values():
        from xpeval.evals.emulator.case_script import CaseEmulator
        from xpeval.evals.emulator.server import EmulatorServer

        if config.emulator_url:
            from xpeval.evals.emulator.remote import RemoteEmulator

            emulator = owned = CaseEmulator(RemoteEmulator(config.emulator_url))
        else:
            server = EmulatorServer(strict=config.strict_emulator).start()
            emulator = owned = CaseEmulator(server)
    factory = EpisodeFactory(
        mode=config.mode,
        store=store,
        picker=picker,
        emulator=emulator,
        stream_policy=config.stream,
        timeout=config.timeout,
        record_flags=record_flags(config),
        refresh=config.refresh,
        targets=suite.targets,
        local_url=config.local_model_url,
    )
    runner = Runner(factory, results, settings)
    todo = runner.pending(suite.episodes)
    resumed = len(suite.episodes) - len(todo)
    if resumed:
        log(f"resuming {results.path}: {resumed} of {len(suite.episodes)} episodes already done")

    session = None
    if config.batch:
        from xpeval.evals.batch.rounds import play_rounds
        from xpeval.evals.batch.session import POLL_CAP, BatchSession, BatchSettings

        poll = BatchSettings(poll_first=config.batch_poll, poll_cap=max(POLL_CAP, config.batch_poll))
        session = BatchSession(factory, results, settings, poll, emulator, log, rounds=play_rounds)

    async def play(bar: Progress | None) -> None:
        runner.progress = bar
        try:
            online = todo
            if session is not None:
                session.progress = bar
                online = await session.run(suite.episodes, todo)
            await runner.run(online)
        finally:
            await factory.aclose()
            if owned is not None:
                await owned.aclose()

    try:
        if progress is None:
            asyncio.run(play(None))
        else:
            with progress(len(todo)) as bar:
                asyncio.run(play(bar))
    finally:
        if server is not None:
            server.stop()
    return resumed


def record_flags(config: SuiteConfig) -> tuple[str, ...]:
    """The flags a printed `xpeval run --mode record ...` hint needs to run as printed."""
    from xpeval.evals.cassettes.binding import hint_flags

    return hint_flags(case_dir=config.case_dir, cassettes=config.cassettes, root=config.root)


def _local_model_up(model: str | None) -> bool:
    """Whether the local server of `model` (a served alias; None: the default) runs."""
    try:
        from xpeval.evals.local_model import LocalModelServer
        from xpeval.evals.local_model.models import find_model

        if model is not None and find_model(model) is None:
            return False  # not a model the local servers serve
        return LocalModelServer(model).status().state == "running"
    except Exception:
        return False


__all__ = ["SuiteConfig", "SuiteOutcome", "SuitePlan", "plan_suite", "run_suite"]
