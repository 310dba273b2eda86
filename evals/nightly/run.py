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

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx2
import pandas as pd

from xpeval.adapters.contract import ProviderError, TurnRequest, UserMessage, WireName
from xpeval.adapters.registry import adapter_ids, effective_contract, get_entry, provider_of
from xpeval.evals.acceptance.measure import CorpusSchema, PairResult, measure_pair
from xpeval.evals.acceptance.sources.tool_files import BUILTIN_CORPUS, FoundTool, read_tools
from xpeval.evals.errors import UserError
from xpeval.evals.results.load import FRAME_COLUMNS, LoadedRun, load_run
from xpeval.evals.running.suite import Log, SuiteConfig, SuiteOutcome, run_suite, scope_of
from xpeval.evals.running.targets import TargetKind, default_model, describe_target, provider_ready
from xpeval.evals.scrub import scrub_line
from xpeval.evals.verdict.baseline import Baseline, codes_by_row, comparable, flag_counts, split_key, update
from xpeval.evals.verdict.gate import Finding, GateReport, RunScope, baseline_for_run, evaluate
from xpeval.evals.verdict.paired_test import ALPHA
from xpeval.evals.verdict.scorecard import RATES

NIGHTLY_DIR = Path("reports/nightly")
DEFAULT_CASSETTES = NIGHTLY_DIR / "cassettes"
DEFAULT_RESULTS = NIGHTLY_DIR / "results.jsonl"
DEFAULT_HISTORY = Path("reports/history")

EXIT_PASSED = 0
EXIT_ALERTS = 1
EXIT_NOTHING = 3
"""No adapter had a target: nothing was measured (a nightly that measured nothing is not green)."""

PROBE_PROMPT = "Reply with the word OK."
MIN_OUTPUT_TOKENS: Mapping[WireName, int] = {"openai-responses": 16}
"""The smallest output budget each wire's API takes (the Responses API refuses
`max_output_tokens` below 16 with a 400, which would read as a refused tool; the other wires
take 1). A probe asks whether the tool is accepted, not for an answer."""
REFUSAL_STATUSES = frozenset({400, 422})
"""The statuses a provider refuses a request's content with (a tool it will not take)."""
MESSAGE_CHARS = 2000

Answer = Literal["accepted", "refused", "error", "not-sent"]
Prediction = Literal["accepted", "refused", "not-sent"]


# --- configuration ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NightlyConfig:
    """Everything a nightly is: what to measure, where its files go, what it is compared with."""

    adapters: Sequence[str] = ()
    """Adapter ids (empty: every registered adapter)."""
    models: Sequence[str] = ()
    """Provider targets: `MODEL` for each or `ADAPTER=MODEL` (empty: the provider's default)."""
    local_models: Sequence[str] = ()
    """Local targets: the served models' aliases (empty: every model in `xpeval.evals.local_model.MODELS`)."""
    cases: Sequence[str] = ()
    categories: Sequence[str] = ()
    case_dir: Path | None = None
    serve_local: bool = False
    """Start the local servers the run needs (when the extra is installed) and stop them after."""
    cassettes: Path = DEFAULT_CASSETTES
    results: Path = DEFAULT_RESULTS
    reports: Path = NIGHTLY_DIR
    baseline: Path | None = None
    """The gate's baseline (None: the case set's default, reports/baseline.json)."""
    history: Path = DEFAULT_HISTORY
    corpus: Path | None = None
    """Tools for live schema acceptance (None: the built-in schema corpus)."""
    schemas: bool = True
    """Probe live schema acceptance for every adapter with a live provider."""
    allow_nothing: bool = False
    """Nothing to measure (no key, no local server) is a pass, not `EXIT_NOTHING`."""
    concurrency: int = 4
    rate: float | None = None
    retries: int = 2
    timeout: float = 60.0
    tolerance: float = 0.0
    """Also alert when a rate drops by more than this (both comparisons; 0: the paired test only)."""
    root: Path = Path(".")

    def suite_config(self, targets: Mapping[str, TargetKind], models: Sequence[str]) -> SuiteConfig:
        from xpeval.evals.cassettes import Mode

        return SuiteConfig(
            mode=Mode.RECORD,
            refresh=True,
            adapters=tuple(targets),
            models=tuple(models),
            cases=tuple(self.cases),
            categories=tuple(self.categories),
            case_dir=self.case_dir,
            targets=dict(targets),
            concurrency=self.concurrency,
            rate=self.rate,
            retries=self.retries,
            timeout=self.timeout,
            cassettes=self.cassettes,
            results=self.results,
            reports=self.reports,
            baseline=self.baseline,
            tolerance=self.tolerance,
            root=self.root,
        )


class LocalServers(Protocol):
    """The local model servers as the nightly sees them (tests pass a fake)."""

    def running(self, alias: str) -> bool: ...

    def missing(self, alias: str) -> str | None:
        """Why the server of `alias` cannot be started here (None: the extra is installed)."""
        ...

    def start(self, alias: str) -> None: ...

    def stop(self, alias: str) -> None: ...


class InstalledServers:
    """The real servers (`xpeval.evals.local_model.LocalModelServer`); only ever stops what it started."""

    def running(self, alias: str) -> bool:
        from xpeval.evals.local_model import LocalModelServer

        try:
            return LocalModelServer(alias).status().state == "running"
        except UserError:
            return False

    def missing(self, alias: str) -> str | None:
        from xpeval.evals.local_model import find_artifacts

        try:
            find_artifacts(alias)
        except UserError as exc:
            return str(exc)
        return None

    def start(self, alias: str) -> None:
        from xpeval.evals.local_model import LocalModelServer

        LocalModelServer(alias).serve()

    def stop(self, alias: str) -> None:
        from xpeval.evals.local_model import LocalModelServer

        LocalModelServer(alias).stop()


# --- targets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AdapterTarget:
    """Where one adapter's answers come from tonight, or why it is skipped."""

    adapter: str
    kind: TargetKind | None
    """None: skipped (`reason` says why)."""
    models: tuple[str, ...] = ()
    reason: str = ""
    line: str = ""
    """Where its answers come from, as the run says it (`xpeval.evals.running.targets.describe_target`)."""

    @property
    def skipped(self) -> bool:
        return self.kind is None


@dataclass
class NightlyPlan:
    targets: list[AdapterTarget]
    start: list[str] = field(default_factory=list)
    """Local servers to start for the run (`serve_local`), by alias."""
    tools: list[FoundTool] = field(default_factory=list)

    @property
    def measured(self) -> list[AdapterTarget]:
        return [t for t in self.targets if not t.skipped]

    @property
    def skipped(self) -> list[AdapterTarget]:
        return [t for t in self.targets if t.skipped]

    def suite_models(self) -> list[str]:
        return [f"{t.adapter}={model}" for t in self.measured for model in t.models]


def credentials_hint(adapter_id: str) -> str:
    """The environment variables that make an adapter live, from its provider's data."""
    provider = provider_of(adapter_id)
    groups = provider.ready_when or tuple((name,) for name in provider.key_vars)
    named = [" + ".join(group) for group in groups if group]
    return " or ".join(named) or "its provider's key"


def _provider_models(config: NightlyConfig, adapter_id: str) -> tuple[str, ...]:
    """The models named for a live adapter (`MODEL` or `ADAPTER=MODEL`), else its default."""
    chosen: list[str] = []
    for spec in config.models:
        for item in (part.strip() for part in spec.split(",")):
            if "=" in item:
                named, model = (x.strip() for x in item.split("=", 1))
                if named == adapter_id and model:
                    chosen.append(model)
            elif item:
                chosen.append(item)
    return tuple(dict.fromkeys(chosen)) or (default_model(adapter_id, "provider"),)


def _local_aliases(config: NightlyConfig) -> list[str]:
    from xpeval.evals.local_model.models import MODELS, get_model

    for alias in config.local_models:
        get_model(alias)
    return list(config.local_models) or [model.alias for model in MODELS]


def _served_where(adapter_id: str) -> str:
    from xpeval.evals.local_model import SERVED_WIRES

    wire = effective_contract(adapter_id).wire
    if wire not in SERVED_WIRES:
        return f"the local model does not serve its wire ({wire})"
    return "the local model server cannot take its URL shape (its provider rebuilds the base URL)"


def plan_nightly(config: NightlyConfig, servers: LocalServers) -> NightlyPlan:
    """Every adapter's target or reason to skip, the servers to start, the corpus to probe.
    Sends no request and starts nothing."""
    adapters = list(dict.fromkeys(config.adapters)) or adapter_ids()
    _check_adapter_names(config, adapters)
    # `xpeval.evals.running.targets.local_capable(a)` is `a in local_adapter_ids()`, which builds every
    # local adapter: asked once here, not once per adapter.
    from xpeval.evals.local_model import local_adapter_ids

    capable = set(local_adapter_ids()) if not all(provider_ready(a) for a in adapters) else set()
    needs_local = [a for a in adapters if not provider_ready(a) and a in capable]
    local = _local_servers(config, servers) if needs_local else _LocalServerPlan()
    targets = [_target(config, adapter_id, adapter_id in needs_local, local) for adapter_id in adapters]
    plan = NightlyPlan(
        targets=targets, start=[a for a in local.startable if any(t.kind == "local-model" for t in targets)]
    )
    if config.schemas and any(t.kind == "provider" for t in targets):
        plan.tools = read_tools([config.corpus or BUILTIN_CORPUS]).tools
    return plan


def _check_adapter_names(config: NightlyConfig, adapters: list[str]) -> None:
    """Unknown adapter ids, in the selection or a `--models a=m` spec, fail before anything runs."""
    for adapter_id in adapters:
        get_entry(adapter_id)
    for spec in config.models:
        for item in (part.strip() for part in spec.split(",")):
            if "=" in item:
                get_entry(item.split("=", 1)[0].strip())


@dataclass
class _LocalServerPlan:
    """Which local model aliases are up or can be started, and why the others cannot."""

    up: list[str] = field(default_factory=list)
    startable: list[str] = field(default_factory=list)
    why_not: dict[str, str] = field(default_factory=dict)


def _local_servers(config: NightlyConfig, servers: LocalServers) -> _LocalServerPlan:
    aliases = _local_aliases(config)
    running = [alias for alias in aliases if servers.running(alias)]
    plan = _LocalServerPlan()
    if config.serve_local:
        for alias in aliases:
            if alias in running:
                continue
            reason = servers.missing(alias)
            if reason is None:
                plan.startable.append(alias)
            else:
                plan.why_not[alias] = reason
    plan.up = [alias for alias in aliases if alias in running or alias in plan.startable]
    return plan


def _target(
    config: NightlyConfig, adapter_id: str, needs_local: bool, local: _LocalServerPlan
) -> AdapterTarget:
    if provider_ready(adapter_id):
        models = _provider_models(config, adapter_id)
        line = describe_target(adapter_id, "provider", ", ".join(models))
        return AdapterTarget(adapter_id, "provider", models, line=line)
    no_key = f"no credentials (set {credentials_hint(adapter_id)})"
    if not needs_local:
        return AdapterTarget(adapter_id, None, reason=f"{no_key}; {_served_where(adapter_id)}")
    if local.up:
        line = describe_target(adapter_id, "local-model", ", ".join(local.up))
        return AdapterTarget(adapter_id, "local-model", tuple(local.up), line=line)
    if config.serve_local:
        first = next(iter(local.why_not.values()), "no local model to start")
        return AdapterTarget(adapter_id, None, reason=f"{no_key}; cannot start a local server: {first}")
    return AdapterTarget(
        adapter_id,
        None,
        reason=f"{no_key}; no local model server is running (start one with `xpeval local-model "
        "serve`, or pass --serve-local)",
    )


# --- live schema acceptance -----------------------------------------------------------------


@dataclass(frozen=True)
class SchemaProbe:
    """One corpus tool sent once to one live adapter: the checker's prediction and the answer."""

    adapter: str
    model: str
    schema: str
    tool: str
    predicted: Prediction
    rules: tuple[str, ...] = ()
    """The checker's rules the sent definition breaks (why it predicts a refusal)."""
    answer: Answer = "not-sent"
    status: int | None = None
    message: str | None = None
    """The provider's error text when it did not accept, or why nothing was sent."""

    @property
    def agrees(self) -> bool | None:
        """Whether the provider answered as the checker predicts (None: nothing to compare)."""
        if self.predicted == "not-sent" or self.answer not in ("accepted", "refused"):
            return None
        return self.predicted == self.answer

    def row(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "model": self.model,
            "schema": self.schema,
            "tool": self.tool,
            "predicted": self.predicted,
            "rules": ",".join(self.rules),
            "answer": self.answer,
            "status": self.status,
            "message": self.message,
            "agrees": self.agrees,
        }


def predict(adapter_id: str, tool: FoundTool) -> tuple[Prediction, tuple[str, ...], PairResult]:
    """The offline checker's prediction for one pair (`xpeval.evals.acceptance.measure.measure_pair`):
    `not-sent` when the adapter itself refuses the tool, `refused` when the definition it would
    send breaks a provider rule, else `accepted`."""
    pair = measure_pair(
        adapter_id,
        CorpusSchema(tool.key, tool.spec, source=tool.source, form=tool.form),
        examples=0,
        seconds=0.0,
        fidelity=False,
    )
    if pair.verdict == "refused":
        return "not-sent", (), pair
    rules = tuple(dict.fromkeys(v.rule for v in pair.violations))
    return ("refused" if rules else "accepted"), rules, pair


ProbeUpstream = Callable[[str, str], httpx2.AsyncBaseTransport]
"""(adapter id, schema key) -> the transport one probe goes through (tests: the emulator)."""


def _scrubbed(text: str | None) -> str | None:
    if text is None:
        return None
    return scrub_line(text)[:MESSAGE_CHARS]


def _answer_of(error: ProviderError | None, status: int | None) -> tuple[Answer, int | None, str | None]:
    if error is None:
        return "accepted", status or 200, None
    if error.kind == "refused":
        return "not-sent", None, _scrubbed(error.message)
    if error.kind == "http" and error.status in REFUSAL_STATUSES:
        return "refused", error.status, _scrubbed(error.message)
    return "error", error.status, _scrubbed(f"{error.kind}: {error.message}")


async def _probe_adapter(
    adapter_id: str,
    model: str,
    tools: Sequence[FoundTool],
    config: NightlyConfig,
    upstream: ProbeUpstream | None,
) -> list[SchemaProbe]:
    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter
    from xpeval.evals.running.episode_transport import EpisodeRouter, bound, upstream_pool

    router = EpisodeRouter(upstream_pool())
    adapter = create_adapter(
        adapter_id, AdapterSettings(model=model, transport=router, timeout=config.timeout)
    )
    wire = effective_contract(adapter_id).wire
    gate = asyncio.Semaphore(config.concurrency)
    limiter = None
    if config.rate is not None:
        from aiolimiter import AsyncLimiter

        limiter = AsyncLimiter(config.rate, 1)

    async def probe(tool: FoundTool) -> SchemaProbe:
        predicted, rules, pair = predict(adapter_id, tool)
        base = SchemaProbe(adapter_id, model, tool.key, tool.spec.name, predicted, rules)
        if predicted == "not-sent":
            return _with(base, "not-sent", None, pair.refusal)
        request = TurnRequest(
            model=model,
            messages=[UserMessage(content=PROBE_PROMPT)],
            tools=[tool.spec],
            tool_choice="auto",
            max_output_tokens=MIN_OUTPUT_TOKENS.get(wire, 1),
        )
        async with gate:
            for attempt in range(config.retries + 1):
                if limiter is not None:
                    await limiter.acquire()
                with bound(upstream(adapter_id, tool.key) if upstream is not None else None):
                    try:
                        result = await asyncio.wait_for(adapter.turn(request), config.timeout * 2)
                        error, status = result.error, result.status
                    except TimeoutError:
                        return _with(base, "error", None, f"no answer within {config.timeout * 2:g} s")
                    except Exception as exc:  # an encoder that cannot take the tool: nothing was sent
                        return _with(base, "not-sent", None, f"{type(exc).__name__}: {exc}")
                if error is None or not error.retryable or attempt == config.retries:
                    return _with(base, *_answer_of(error, status))
                await asyncio.sleep(min(error.retry_after or 2.0**attempt, 30.0))
        raise AssertionError("unreachable")

    try:
        return list(await asyncio.gather(*(probe(tool) for tool in tools)))
    finally:
        await adapter.aclose()
        await router.aclose()


def _with(probe: SchemaProbe, answer: Answer, status: int | None, message: str | None) -> SchemaProbe:
    return SchemaProbe(
        probe.adapter,
        probe.model,
        probe.schema,
        probe.tool,
        probe.predicted,
        probe.rules,
        answer,
        status,
        message,
    )


def probe_schemas(
    targets: Sequence[AdapterTarget],
    tools: Sequence[FoundTool],
    config: NightlyConfig,
    *,
    upstream: ProbeUpstream | None = None,
) -> list[SchemaProbe]:
    """Every tool sent once to every adapter with a live provider (its first nightly model)."""
    live = [t for t in targets if t.kind == "provider"]

    async def every() -> list[SchemaProbe]:
        found = await asyncio.gather(
            *(_probe_adapter(t.adapter, t.models[0], tools, config, upstream) for t in live)
        )
        return [probe for probes in found for probe in probes]

    return asyncio.run(every()) if live and tools else []


def probes_frame(probes: Sequence[SchemaProbe]) -> pd.DataFrame:
    columns = [
        "adapter",
        "model",
        "schema",
        "tool",
        "predicted",
        "rules",
        "answer",
        "status",
        "message",
        "agrees",
    ]
    frame = pd.DataFrame([p.row() for p in probes], columns=columns)
    frame["status"] = frame["status"].astype("Int64")
    return frame


# --- alerts -----------------------------------------------------------------------------------


AlertKind = Literal["regression", "conformance", "unmeasured", "missing", "schema"]


@dataclass(frozen=True)
class Alert:
    """One reason the nightly fails: what changed, for which adapter and model, and where."""

    kind: AlertKind
    against: str
    """What it was compared with: the gate's baseline, the last good nightly, the checker."""
    adapter: str
    model: str
    metric: str
    change: str
    cases: tuple[str, ...] = ()
    """The cases that flipped for the worse (a schema alert: the tool)."""
    source: str = ""
    detail: str = ""

    def line(self) -> str:
        where = f"{self.model}, {self.source}" if self.source else self.model
        text = f"{self.kind.upper()} {self.adapter} ({where}) {self.metric} vs {self.against}: {self.change}"
        if self.cases:
            text += f"; flipped: {_names(self.cases)}"
        if self.detail:
            text += f" — {self.detail}"
        return text


SHOWN = 12


def _names(cases: Sequence[str]) -> str:
    shown = ", ".join(cases[:SHOWN])
    return f"{len(cases)} [{shown}{', ...' if len(cases) > SHOWN else ''}]"


def _pct(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k}/{n})" if n else "- (0/0)"


def finding_alerts(
    report: GateReport,
    compared: Baseline | None,
    frame: pd.DataFrame,
    against: str,
    *,
    rates_only: bool = False,
) -> list[Alert]:
    """The failures of a gate report as alerts, each rate's change counted on the shared cases."""
    current = codes_by_row(frame)
    by_class = {comparable(key): key for key in current}
    alerts = []
    for finding in report.failures:
        source, adapter, model = split_key(finding.key)
        if finding.metric in RATES:
            alerts.append(_rate_alert(finding, compared, current, by_class, against))
        elif rates_only:
            continue
        elif finding.metric.startswith("conformance"):
            case = finding.metric.partition(":")[2]
            cases = (case,) if case else ()
            alert = Alert(
                "conformance", against, adapter or "*", model or "-", "conformance", finding.message, cases
            )
            alerts.append(replace(alert, source=source))
        elif finding.metric == "measured":
            alert = Alert("unmeasured", against, adapter or "*", model or "-", "errors", finding.message)
            alerts.append(replace(alert, source=source))
        else:
            alert = Alert("missing", against, adapter, model, finding.metric, finding.message, finding.worse)
            alerts.append(replace(alert, source=source))
    return alerts


def _rate_alert(
    finding: Finding,
    compared: Baseline | None,
    current: dict[str, dict[str, str]],
    by_class: dict[tuple[str, str, str], str],
    against: str,
) -> Alert:
    """A rate that got worse: its k/n before and now on the shared cases, the cases that flipped."""
    source, adapter, model = split_key(finding.key)
    now_key = by_class.get(comparable(finding.key), "")
    before = (compared.rows if compared else {}).get(finding.key, {})
    now = current.get(now_key, {})
    shared = sorted(set(before) & set(now))
    k0, n0 = flag_counts((before[c] for c in shared), finding.metric)
    k1, n1 = flag_counts((now[c] for c in shared), finding.metric)
    detail = finding.message.split(" — ", 1)[1] if " — " in finding.message else ""
    change = f"{_pct(k0, n0)} -> {_pct(k1, n1)} on {len(shared)} shared cases"
    # A live row is compared with the baseline's cassette row
    # (`xpeval.evals.verdict.baseline.comparable`): the
    # alert names the row measured tonight, and which row it was held against.
    measured = split_key(now_key)[0] or source
    where = against if measured == source else f"{against} ({source} row)"
    return Alert("regression", where, adapter, model, finding.metric, change, finding.worse, measured, detail)


def schema_alerts(
    probes: Sequence[SchemaProbe], last: pd.DataFrame | None, last_run: str | None
) -> tuple[list[Alert], list[str]]:
    """Alerts for answers that disagree with the checker or refuse a tool the last good nightly
    had accepted; notes for answers that could not be had."""
    alerts: list[Alert] = []
    notes: list[str] = []
    before: dict[tuple[str, str, str], str] = {}
    if last is not None and not last.empty:
        before = {
            (str(r.adapter), str(r.model), str(r.schema)): str(r.answer) for r in last.itertuples(index=False)
        }
    for p in probes:
        said = f"{p.status}: {p.message}" if p.status else (p.message or "")
        if p.answer == "refused" and before.get((p.adapter, p.model, p.schema)) == "accepted":
            change = f"{p.schema} newly refused (accepted then): {said}"
            against = f"last good nightly {last_run}"
            alerts.append(
                Alert("schema", against, p.adapter, p.model, "schema acceptance", change, (p.schema,))
            )
        if p.agrees is False:
            if p.answer == "refused":
                change = f"{p.schema} refused, the checker predicts accepted: {said}"
            else:
                change = f"{p.schema} accepted, the checker predicts refused ({', '.join(p.rules)})"
            alerts.append(
                Alert(
                    "schema",
                    "the offline checker",
                    p.adapter,
                    p.model,
                    "schema acceptance",
                    change,
                    (p.schema,),
                )
            )
    errors = [p for p in probes if p.answer == "error"]
    if errors:
        shown = ", ".join(f"{p.adapter}/{p.schema}" for p in errors[:5])
        notes.append(
            f"{len(errors)} schema probe(s) got no verdict (rate limits, server errors, timeouts): {shown}"
            f"{', ...' if len(errors) > 5 else ''}; first: {errors[0].message}"
        )
    return alerts, notes


# --- the outcome ------------------------------------------------------------------------------


@dataclass
class NightlyOutcome:
    plan: NightlyPlan
    suite: SuiteOutcome | None = None
    run: str | None = None
    alerts: list[Alert] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)
    """What the run was compared with, one line each."""
    probes: list[SchemaProbe] = field(default_factory=list)
    history_file: Path | None = None
    started: list[str] = field(default_factory=list)
    """Local servers this nightly started (and stopped)."""
    allow_nothing: bool = False
    dry_run: bool = False
    """Planned only: nothing was sent, started or written."""

    @property
    def nothing(self) -> bool:
        return not self.plan.measured

    @property
    def passed(self) -> bool:
        return not self.alerts and (not self.nothing or self.allow_nothing)

    @property
    def exit_code(self) -> int:
        if self.nothing:
            return EXIT_PASSED if self.allow_nothing else EXIT_NOTHING
        return EXIT_ALERTS if self.alerts else EXIT_PASSED

    def verdict(self) -> str:
        if self.nothing:
            what = "nothing to measure" + (" (allowed)" if self.allow_nothing else ": FAILED")
            return f"nightly: {what} — no adapter has credentials or a local model serving it"
        if self.dry_run:
            measured, skipped = len(self.plan.measured), len(self.plan.skipped)
            return f"nightly (dry run): would measure {measured} adapter(s), {skipped} skipped"
        if self.alerts:
            return f"nightly: FAILED ({len(self.alerts)} alert(s))"
        return "nightly: passed"

    def lines(self) -> list[str]:
        out = [f"xpeval nightly {self.run}" if self.run else "xpeval nightly"]
        if self.plan.measured:
            out += ["targets:", *(f"  {t.line}" for t in self.plan.measured)]
        if self.plan.skipped:
            out += ["skipped:", *(f"  {t.adapter}: {t.reason}" for t in self.plan.skipped)]
        if self.started:
            out.append(f"local servers started for the run and stopped after: {', '.join(self.started)}")
        if self.probes:
            counted = pd.Series([p.answer for p in self.probes]).value_counts()
            said = ", ".join(f"{n} {answer}" for answer, n in counted.items())
            out.append(f"live schema acceptance: {len(self.probes)} probes ({said})")
        if self.compared:
            out += ["compared with:", *(f"  {line}" for line in self.compared)]
        if self.alerts:
            out += [f"alerts ({len(self.alerts)}):", *(f"  {alert.line()}" for alert in self.alerts)]
        if self.notes:
            out += ["notes:", *(f"  {note}" for note in self.notes)]
        if self.history_file is not None:
            out.append(f"history: {self.history_file}")
        out.append(self.verdict())
        return out

    def summary(self) -> str:
        """What the nightly printed and wrote to nightly.txt (scrubbed: base URLs carry keys)."""
        return scrub_line("\n".join(self.lines()))

    def markdown(self) -> str:
        """The summary as GitHub step-summary Markdown."""
        title = "passed" if self.passed and not self.nothing else self.verdict().removeprefix("nightly: ")
        lines = [f"## xpeval nightly: {title}", ""]
        if self.plan.measured:
            lines += ["| adapter | target |", "|---|---|"]
            lines += [
                f"| {t.adapter} | {t.line.split(': ', 1)[-1].replace('|', '/')} |" for t in self.plan.measured
            ]
        if self.plan.skipped:
            lines += ["", "Skipped:", ""]
            lines += [f"- **{t.adapter}**: {t.reason.replace('|', '/')}" for t in self.plan.skipped]
        if self.alerts:
            lines += [
                "",
                "| alert | adapter | model | metric | change | flipped |",
                "|---|---|---|---|---|---|",
            ]
            for a in self.alerts:
                change, flipped = a.change.replace("|", "/"), _names(a.cases) if a.cases else ""
                cells = [f"{a.kind} vs {a.against}", a.adapter, a.model, a.metric, change, flipped]
                lines.append("| " + " | ".join(cells) + " |")
        if self.notes:
            lines += ["", *[f"> {note}" for note in self.notes]]
        return scrub_line("\n".join(lines) + "\n")


# --- the run ----------------------------------------------------------------------------------


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
    compared, _ = baseline_for_run(before, scope)
    # The gate's own test at the gate's own level (`xpeval.evals.verdict.paired_test.ALPHA`), as run_suite
    # judges the baseline.
    report = evaluate(frame, compared, scope, tolerance=config.tolerance, alpha=ALPHA)
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
    loaded = load_run(config.results)
    scope = scope_of(loaded.header)
    baseline_path = suite_config.baseline_path()
    gate_baseline = _gate_baseline(baseline_path, scope)
    outcome.alerts += finding_alerts(suite.gate, gate_baseline, suite.frame, f"baseline {baseline_path}")
    outcome.notes += [f"vs baseline {baseline_path}: {note}" for note in suite.gate.notes]
    outcome.compared.append(f"baseline {baseline_path}")
    alerts, notes, compared, last = _last_good_comparison(config, loaded, scope, suite.frame)
    outcome.alerts += alerts
    outcome.notes += notes
    outcome.compared += compared
    if plan.tools:
        live = sum(t.kind == "provider" for t in plan.measured)
        log(f"live schema acceptance: {len(plan.tools)} tools x {live} live adapter(s)")
        outcome.probes = probe_schemas(plan.measured, plan.tools, config, upstream=probe_upstream)
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
    _write_reports(config.reports, outcome)
    return outcome


def _served(model: str | None) -> str:
    from xpeval.evals.local_model import MODEL_ALIAS

    return model or MODEL_ALIAS


def _gate_baseline(path: Path, scope: RunScope) -> Baseline | None:
    from xpeval.evals.verdict.baseline import read_baseline

    if not path.exists():
        return None
    compared, _ = baseline_for_run(read_baseline(path), scope)
    return compared


def _write_reports(reports: Path, outcome: NightlyOutcome) -> None:
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "nightly.md").write_text(outcome.markdown(), encoding="utf-8")
    (reports / "nightly.txt").write_text(outcome.summary() + "\n", encoding="utf-8")
    if outcome.probes:
        probes_frame(outcome.probes).to_csv(reports / "schema_acceptance_live.csv", index=False)


__all__ = [
    "EXIT_ALERTS",
    "EXIT_NOTHING",
    "EXIT_PASSED",
    "AdapterTarget",
    "Alert",
    "InstalledServers",
    "LocalServers",
    "NightlyConfig",
    "NightlyOutcome",
    "NightlyPlan",
    "SchemaProbe",
    "plan_nightly",
    "predict",
    "probe_schemas",
    "run_nightly",
]
