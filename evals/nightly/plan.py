"""Tonight's plan: each adapter's target (the live provider, the local model) or why it is
skipped, the local servers to start, the tools to probe. Sends nothing and starts nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from xpeval.adapters.registry import adapter_ids, effective_contract, get_entry, provider_of
from xpeval.evals.acceptance.sources.tool_files import BUILTIN_CORPUS, FoundTool, read_tools
from xpeval.evals.nightly.config import NightlyConfig
from xpeval.evals.nightly.servers import LocalServers
from xpeval.evals.running.targets import TargetKind, default_model, describe_target, provider_ready


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
    # local adapter: asked once here (`_local_capable`), not once per adapter.
    url = config.run.local_model_url
    capable = set(_local_capable(url)) if not all(provider_ready(a) for a in adapters) else set()
    needs_local = [a for a in adapters if not provider_ready(a) and a in capable]
    local = _LocalServerPlan()
    if needs_local:
        local = _own_server(config, url) if url is not None else _local_servers(config, servers)
    targets = [_target(config, adapter_id, adapter_id in needs_local, local) for adapter_id in adapters]
    plan = NightlyPlan(
        targets=targets, start=[a for a in local.startable if any(t.kind == "local-model" for t in targets)]
    )
    if config.schemas and any(t.kind == "provider" for t in targets):
        plan.tools = read_tools([config.corpus or BUILTIN_CORPUS]).tools
    return plan


def _local_capable(url: str | None) -> list[str]:
    """The adapters the local target can take: any a bundled server serves, or with the team's
    own server at `url`, the OpenAI Chat ones."""
    from xpeval.evals.local_model.local_adapters import local_adapter_ids, server_url_adapter_ids

    return server_url_adapter_ids() if url is not None else local_adapter_ids()


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


def _own_server(config: NightlyConfig, url: str) -> _LocalServerPlan:
    """The team's own server at `url`: the `--local-models` it lists are up (it is never started)."""
    from xpeval.errors import UserError
    from xpeval.evals.local_model import LocalModelError
    from xpeval.evals.local_model.own_server import served_models

    if not config.local_models:
        raise UserError("--local-model-url needs --local-models NAME: the model names your server serves")
    plan = _LocalServerPlan()
    try:
        listed = served_models(url)
    except LocalModelError as exc:
        plan.why_not = dict.fromkeys(config.local_models, str(exc))
        return plan
    plan.up = [name for name in config.local_models if name in listed]
    plan.why_not = {
        name: f"{url} does not serve {name} (it lists: {', '.join(listed[:20]) or 'nothing'})"
        for name in config.local_models
        if name not in listed
    }
    return plan


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
    url = config.run.local_model_url
    if not needs_local:
        where = (
            _served_where(adapter_id)
            if url is None
            else "your server at a URL is offered OpenAI Chat adapters only"
        )
        return AdapterTarget(adapter_id, None, reason=f"{no_key}; {where}")
    if local.up:
        line = describe_target(adapter_id, "local-model", ", ".join(local.up), url)
        return AdapterTarget(adapter_id, "local-model", tuple(local.up), line=line)
    if url is not None or config.serve_local:
        first = next(iter(local.why_not.values()), "no local model to start")
        return AdapterTarget(adapter_id, None, reason=f"{no_key}; cannot start a local server: {first}")
    return AdapterTarget(
        adapter_id,
        None,
        reason=f"{no_key}; no local model server is running (start one with `xpeval local-model "
        "serve`, or pass --serve-local)",
    )
