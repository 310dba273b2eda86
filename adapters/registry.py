"""ADAPTER_REGISTRY: the single authority on which adapters exist.

A direct entry names its wire and schema dialect; a wrapper entry names a `contract_parent`
and inherits the parent's wire contract (and so its conformance tests) while constructing
itself with its own factory. Inheritance of contract is not inheritance of constructor.

Every adapter id that comes from outside (CLI flag, config, a results file) is an untrusted
string until `get_entry` / `effective_contract` accepts it.

Nothing is registered at import: `ensure_loaded()` registers xpeval's bundled adapters and then
other packages' plugins, once per process. The CLI, `run_suite` and the pytest plugin call it,
and every lookup here calls it before it reads the registry (docs/plugins.md, "When plugins are
loaded").
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, ClassVar, Literal

from xpeval.adapters import plugins
from xpeval.adapters.adapter import Adapter, AdapterFactory, AdapterSettings, Capabilities, EffectiveContract
from xpeval.adapters.contract import WireName
from xpeval.adapters.providers import anthropic, azure, google, openai, vertex
from xpeval.adapters.providers._spec import Provider
from xpeval.adapters.providers.mimo import MIMO
from xpeval.adapters.providers.moonshot import MOONSHOT
from xpeval.adapters.providers.openai_compatible import OPENAI_COMPATIBLE
from xpeval.adapters.schema import Dialect
from xpeval.adapters.schema.dialects import is_dialect
from xpeval.adapters.wires import catalog
from xpeval.errors import AdapterFactoryError, RefusedPluginError, RegistryError, UnknownAdapterError


def _unknown_adapter(adapter_id: str, known: Iterable[str], named_by: str = "") -> UnknownAdapterError:
    """`Unknown adapter: <id> (...)`: the refused plugin that meant to offer it, where it was
    named, the closest known id and the list."""
    problems = [f"its {p.line()}" for p in plugins.refused_plugins() if adapter_id in p.ids]
    if named_by:
        problems.append(f"named by {named_by}: no installed package offers it")
    ids = sorted(known)
    close = difflib.get_close_matches(adapter_id, ids, n=1) if isinstance(adapter_id, str) else []
    if close:
        problems.append(f"did you mean {close[0]}?")
    problems.append(f"known: {', '.join(ids)}, or all")
    return UnknownAdapterError(f"Unknown adapter: {adapter_id} ({'; '.join(problems)})", adapter_id)


@dataclass(frozen=True)
class DirectEntry:
    wire: WireName
    schema_dialect: Dialect
    provider: Provider
    factory: AdapterFactory
    description: str = ""
    capabilities: Capabilities = field(default_factory=Capabilities)

    kind: ClassVar[Literal["direct"]] = "direct"


@dataclass(frozen=True)
class WrapperEntry:
    contract_parent: str
    provider: Provider
    factory: AdapterFactory | None = None
    """Set only where this provider's client is built otherwise than its parent's (Azure's
    api-key header, Vertex's credentials); None builds it with the parent's factory from this
    wrapper's own provider data (its key variable, base URL, headers)."""
    schema_dialect: Dialect | None = None
    """Set only where this provider's schema dialect differs from its parent's."""
    description: str = ""
    capabilities: Capabilities | None = None
    """Set only where this provider supports something else than its parent."""
    wire: WireName | None = None
    """The wire it speaks, when stated: it must be its contract parent's (a wrapper that speaks
    another wire is refused; a new wire is a `DirectEntry`'s)."""

    kind: ClassVar[Literal["wrapper"]] = "wrapper"


RegistryEntry = DirectEntry | WrapperEntry

_REASONING_CONTENT = Capabilities(reasoning_state=frozenset({"reasoning_content"}))
"""The OpenAI Chat servers that return `reasoning_content` and require it back before a tool turn
(DeepSeek behind openai-compatible, Kimi, MiMo: docs/provider-loop-rules.md)."""

ADAPTER_REGISTRY: dict[str, RegistryEntry] = {
    "openai-chat": DirectEntry(
        wire="openai-chat",
        schema_dialect="openai",
        provider=openai.OPENAI,
        factory=openai.create,
        description="OpenAI Chat Completions",
    ),
    "openai-responses": DirectEntry(
        wire="openai-responses",
        schema_dialect="openai-strict",
        provider=openai.OPENAI,
        factory=openai.create,
        description="OpenAI Responses (strict function tools, the API's own default)",
        capabilities=Capabilities(strict_schemas=True, reasoning_state=frozenset({"reasoning_items"})),
    ),
    "anthropic-messages": DirectEntry(
        wire="anthropic-messages",
        schema_dialect="anthropic",
        provider=anthropic.ANTHROPIC,
        factory=anthropic.create,
        description="Anthropic Messages",
        capabilities=Capabilities(reasoning_state=frozenset({"thinking_blocks"})),
    ),
    "google-genai": DirectEntry(
        wire="google-genai",
        schema_dialect="gemini-json-schema",
        provider=google.GEMINI,
        factory=google.create,
        description="Gemini Developer API (parametersJsonSchema)",
        capabilities=Capabilities(reasoning_state=frozenset({"thought_signatures"})),
    ),
    "azure-openai": WrapperEntry(
        contract_parent="openai-responses",
        provider=azure.AZURE,
        factory=azure.create_deployment,
        description="Azure OpenAI, deployments path with api-version",
    ),
    "azure": WrapperEntry(
        contract_parent="openai-responses",
        provider=azure.AZURE,
        factory=azure.create_v1,
        description="Azure OpenAI v1 endpoint (/openai/v1, api-key header)",
    ),
    "moonshot": WrapperEntry(
        contract_parent="openai-chat",
        provider=MOONSHOT,
        schema_dialect="moonshot",
        description="Moonshot / Kimi (OpenAI Chat wire, Moonshot-flavoured JSON Schema)",
        capabilities=_REASONING_CONTENT,
    ),
    "mimo": WrapperEntry(
        contract_parent="openai-chat",
        provider=MIMO,
        description="Xiaomi MiMo (OpenAI Chat wire)",
        capabilities=_REASONING_CONTENT,
    ),
    "openai-compatible": WrapperEntry(
        contract_parent="openai-chat",
        provider=OPENAI_COMPATIBLE,
        description="Any OpenAI-compatible server: vLLM, llama.cpp, Ollama, OpenRouter, Groq",
        capabilities=_REASONING_CONTENT,
    ),
    "vertex-ai": WrapperEntry(
        contract_parent="google-genai",
        provider=vertex.VERTEX,
        factory=vertex.create,
        schema_dialect="gemini-openapi",
        description="Gemini on Vertex AI (OpenAPI `parameters`)",
    ),
}


def get_entry(adapter_id: str, registry: Mapping[str, RegistryEntry] | None = None) -> RegistryEntry:
    """The entry for `adapter_id`, or `UnknownAdapterError("Unknown adapter: <id> (...)")` with
    the closest known id and the list."""
    reg = _table(registry)
    if not isinstance(adapter_id, str) or adapter_id not in reg:
        raise _unknown_adapter(str(adapter_id), reg)
    return reg[adapter_id]


ALL_ADAPTERS = "all"


def select_adapters(
    requested: Iterable[str], *, named_by: str = "", registry: Mapping[str, RegistryEntry] | None = None
) -> list[str]:
    """The adapter ids a selection names, each checked, in order and once: comma lists are split,
    `all` is every registered adapter, nothing named is nothing (the caller picks its default).
    `named_by` says where the selection came from (`--adapters`, a pyproject.toml), for the error
    of an id nothing installed offers."""
    reg = _table(registry)
    chosen: list[str] = []
    for item in requested:
        for part in (p.strip() for p in item.split(",")):
            if part == ALL_ADAPTERS:
                chosen.extend(reg)
            elif part:
                if part not in reg:
                    raise _unknown_adapter(part, reg, named_by)
                chosen.append(part)
    return list(dict.fromkeys(chosen))


def effective_contract(
    adapter_id: str, registry: Mapping[str, RegistryEntry] | None = None
) -> EffectiveContract:
    """Follow contract parents (with a visited set) to the direct wire. Fails closed on an
    unknown id or parent (`UnknownAdapterError`) and on a cycle (`RegistryError`)."""
    reg = _table(registry)
    chain: list[str] = []
    visited: set[str] = set()
    dialect: Dialect | None = None
    capabilities: Capabilities | None = None
    current = adapter_id
    while True:
        if current in visited:
            raise RegistryError(f"Adapter contract cycle: {' -> '.join([*chain, current])}")
        visited.add(current)
        entry = get_entry(current, reg)
        chain.append(current)
        if dialect is None:
            dialect = entry.schema_dialect
        if capabilities is None:
            capabilities = entry.capabilities
        if isinstance(entry, DirectEntry):
            assert dialect is not None and capabilities is not None
            return EffectiveContract(
                id=adapter_id,
                wire=entry.wire,
                schema_dialect=dialect,
                chain=tuple(chain),
                capabilities=capabilities,
            )
        current = entry.contract_parent


_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
PLUGIN_GROUP = "xpeval.adapters"


def distribution_of(adapter_id: str) -> str:
    """The distribution an adapter comes from: `xpeval` for the built-in ones."""
    get_entry(adapter_id)
    return plugins.origin_of(PLUGIN_GROUP, adapter_id) or plugins.IN_PROCESS


def refuse_if_refused_plugin_in_use(in_use: Iterable[str] | None) -> None:
    """Fail closed (one line) when a refused plugin meant to register or changed an adapter in
    use; `None` means every adapter is (a run that names none runs all, the refused one's too)."""
    ensure_loaded()
    wanted = None if in_use is None else set(in_use)
    hits = [p for p in plugins.refused_plugins() if wanted is None or wanted.intersection(p.ids)]
    if not hits:
        return
    refused = "; ".join(p.line() for p in hits)
    if wanted is None:
        raise RefusedPluginError(
            f"every adapter is in use (none named), but a plugin was refused: {refused} (fix or "
            "uninstall it, or name the adapters to use: docs/plugins.md)"
        )
    ids = sorted({i for p in hits for i in p.ids if i in wanted})
    raise RefusedPluginError(
        f"adapter {', '.join(ids)} in use, but a plugin that registers or changed it was refused: "
        f"{refused} (fix or uninstall it: docs/plugins.md)"
    )


class _RegistryWatch:
    """The registry as a plugin's import found it: which entry each id held, and every field of
    every object those entries hold (providers, capabilities, factories' code). A plugin runs
    arbitrary code, so this cannot stop a determined one; it stops the quiet kind that replaces
    `openai-compatible` or edits its provider, which would change every number it produces."""

    def __init__(self) -> None:
        self._registry = ADAPTER_REGISTRY
        self._entries = dict(ADAPTER_REGISTRY)
        self._slots = {adapter_id: _slots_of(entry) for adapter_id, entry in self._entries.items()}

    def check(self) -> plugins.Tampering | None:
        changes: dict[str, str] = {}
        module = sys.modules[__name__]
        if getattr(module, "ADAPTER_REGISTRY", None) is not self._registry:
            changes["ADAPTER_REGISTRY"] = "rebound"
            setattr(module, "ADAPTER_REGISTRY", self._registry)  # noqa: B010 (mypy: a module attribute)
        for adapter_id, entry in self._entries.items():
            if self._registry.get(adapter_id) is not entry:
                changes[adapter_id] = "replaced" if adapter_id in self._registry else "removed"
            elif any(slot.changed() for slot in self._slots[adapter_id]):
                changes[adapter_id] = "mutated"
        for adapter_id in self._registry.keys() - self._entries.keys():
            changes[adapter_id] = "added outside its entry point"
        if not changes:
            return None
        for slots in self._slots.values():
            for slot in slots:
                slot.restore()
        self._registry.clear()
        self._registry.update(self._entries)
        named = ", ".join(f"{adapter_id} ({how})" for adapter_id, how in sorted(changes.items()))
        return plugins.Tampering(
            f"changed the adapter registry while loading: {named}", tuple(sorted(changes))
        )


@dataclass(frozen=True)
class _Slot:
    """One attribute (or a mapping's items) reachable from an entry, and what it held."""

    holder: Any
    attribute: str | None
    """None: `holder` is a dict and `value` a copy of its items."""
    value: Any

    def changed(self) -> bool:
        if self.attribute is None:
            return bool(self.holder != self.value)
        return getattr(self.holder, self.attribute) is not self.value

    def restore(self) -> None:
        if self.attribute is None:
            self.holder.clear()
            self.holder.update(self.value)
        else:
            object.__setattr__(self.holder, self.attribute, self.value)  # frozen dataclasses too


def _slots_of(root: object) -> list[_Slot]:
    slots: list[_Slot] = []
    seen: set[int] = set()
    stack: list[object] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                value = getattr(node, f.name)
                slots.append(_Slot(node, f.name, value))
                stack.append(value)
        elif isinstance(node, dict):
            slots.append(_Slot(node, None, dict(node)))
            stack.extend(node.values())
        elif isinstance(node, tuple | frozenset):
            stack.extend(node)
        elif isinstance(node, FunctionType):
            slots.extend(_Slot(node, name, getattr(node, name)) for name in _FUNCTION_STATE)
    return slots


_FUNCTION_STATE = ("__code__", "__defaults__", "__kwdefaults__")


def _load_adapter_plugins(group: str = PLUGIN_GROUP) -> list[str]:
    """Register the adapters other packages offer: entry points of `group`, each named by its
    adapter id and pointing at its registry entry (a `DirectEntry` or `WrapperEntry`).

    Each is imported in the guarded step (`xpeval.adapters.plugins`), then validated exactly like
    a built-in entry; one that fails (raises anything while it loads, changes the registry, is
    offered by two distributions, takes a built-in id, is not an entry, names an unknown parent,
    makes a cycle) is not registered and is listed by `refused_plugins()`; using its id fails
    closed naming it and why. Entries may build on each other in any order. Returns the ids
    registered."""
    pending: dict[str, tuple[plugins.LoadedPlugin, RegistryEntry]] = {}
    builtin = {i for i in ADAPTER_REGISTRY if plugins.origin_of(PLUGIN_GROUP, i) == plugins.BUILTIN}
    guards: list[plugins.GuardFactory] = [_RegistryWatch, catalog.WireWatch]
    for plugin in plugins.load_entry_points(group, reserved=builtin, guards=guards):
        if isinstance(plugin.value, DirectEntry | WrapperEntry):
            pending[plugin.name] = (plugin, plugin.value)
        else:
            what = type(plugin.value).__name__
            plugins.refuse(plugin, group, f"it names a {what}, not a DirectEntry or WrapperEntry")
    registered: list[str] = []
    problems: dict[str, str] = {}
    while pending:
        progress = False
        for adapter_id, (plugin, entry) in list(pending.items()):
            try:
                register_adapter(adapter_id, entry, distribution=plugin.distribution)
            except RegistryError as exc:  # an unknown parent too
                problems[adapter_id] = str(exc)
                continue
            registered.append(adapter_id)
            del pending[adapter_id]
            progress = True
        if not progress:
            break
    for adapter_id, (plugin, _) in pending.items():
        plugins.refuse(plugin, group, problems[adapter_id])
    return registered


def validate_registry(registry: Mapping[str, RegistryEntry]) -> None:
    """Every id resolves to a known wire and dialect; raises on the first problem."""
    for adapter_id, entry in registry.items():
        if not isinstance(adapter_id, str) or not _ID.fullmatch(adapter_id):
            raise RegistryError(
                f"Invalid adapter id: {adapter_id!r} (letters, digits, '.', '_' and '-', starting with a "
                "letter or digit: it names cassette folders and CLI flags)"
            )
        if isinstance(entry, DirectEntry) and entry.wire not in catalog.wire_names():
            raise RegistryError(
                f"Adapter {adapter_id} names an unknown wire: {entry.wire}{_refused_wire(entry.wire)}"
            )
        if entry.schema_dialect is not None and not is_dialect(entry.schema_dialect):
            raise RegistryError(
                f"Adapter {adapter_id} names an unknown schema dialect: {entry.schema_dialect}"
            )
        if not callable(factory_of(adapter_id, registry)):
            raise RegistryError(f"Adapter {adapter_id} has no factory")
        if not isinstance(entry.provider, Provider):
            raise RegistryError(f"Adapter {adapter_id} states no provider")
        if entry.capabilities is not None and not isinstance(entry.capabilities, Capabilities):
            raise RegistryError(f"Adapter {adapter_id} declares capabilities that are not a Capabilities")
        contract = effective_contract(adapter_id, registry)
        if isinstance(entry, WrapperEntry) and entry.wire is not None and entry.wire != contract.wire:
            raise RegistryError(
                f"Adapter {adapter_id} speaks the {entry.wire} wire but its contract parent "
                f"{entry.contract_parent} speaks {contract.wire} (a wrapper keeps its parent's wire; a new "
                "wire needs a DirectEntry: docs/plugin-api.md)"
            )


def _refused_wire(wire: str) -> str:
    """Why a wire is unknown, when a plugin that meant to register it was refused."""
    lines = [p.line() for p in plugins.refused_plugins(catalog.WIRE_GROUP) if wire in p.ids]
    return f" ({'; '.join(lines)})" if lines else ""


def adapter_ids(registry: Mapping[str, RegistryEntry] | None = None) -> list[str]:
    return list(_table(registry))


def direct_adapter_for_wire(wire: WireName, registry: Mapping[str, RegistryEntry] | None = None) -> str:
    """The id of the direct adapter that owns `wire`."""
    reg = _table(registry)
    for adapter_id, entry in reg.items():
        if isinstance(entry, DirectEntry) and entry.wire == wire:
            return adapter_id
    raise RegistryError(f"No direct adapter speaks the {wire} wire")


def factory_of(adapter_id: str, registry: Mapping[str, RegistryEntry] | None = None) -> AdapterFactory | None:
    """The factory that builds `adapter_id`: its own, or the nearest contract parent's."""
    reg = _table(registry)
    visited: set[str] = set()
    current = adapter_id
    while current not in visited:
        visited.add(current)
        entry = get_entry(current, reg)
        if entry.factory is not None:
            return entry.factory
        assert isinstance(entry, WrapperEntry)  # a DirectEntry always has one
        current = entry.contract_parent
    return None


def create_adapter(adapter_id: str, settings: AdapterSettings | None = None) -> Adapter:
    """Construct the adapter registered under `adapter_id` with its own factory. A plugin's
    factory that raises or builds something else than an `Adapter` is an `AdapterFactoryError`
    naming the adapter and its distribution (a built-in factory's own errors pass unchanged)."""
    entry = get_entry(adapter_id)
    contract = effective_contract(adapter_id)
    factory = factory_of(adapter_id)
    assert factory is not None  # registration refuses an entry without one
    origin = plugins.origin_of(PLUGIN_GROUP, adapter_id) or plugins.IN_PROCESS
    if origin == plugins.BUILTIN:
        return factory(contract, entry.provider, settings or AdapterSettings())
    try:
        adapter = factory(contract, entry.provider, settings or AdapterSettings())
    except Exception as exc:  # the plugin's bug, named as the plugin's
        raise AdapterFactoryError(
            f"adapter {adapter_id} of {origin}: its factory raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(adapter, Adapter):
        raise AdapterFactoryError(
            f"adapter {adapter_id} of {origin}: its factory returned {type(adapter).__name__}, not an Adapter"
        )
    spoken = getattr(adapter.wire, "name", None)
    if adapter.contract != contract or spoken != contract.wire:
        raise AdapterFactoryError(
            f"adapter {adapter_id} of {origin}: its factory built an adapter speaking {spoken} under "
            f"another contract than its own ({contract.wire} wire): a factory builds the contract it is given"
        )
    return adapter


def provider_of(adapter_id: str) -> Provider:
    """The provider data of an adapter: its key variables, default model, secret headers."""
    return get_entry(adapter_id).provider


def providers() -> list[Provider]:
    """Every registered adapter's provider, once each (what scrubbing and log filters cover)."""
    return list({id(entry.provider): entry.provider for entry in _table(None).values()}.values())


def register_adapter(
    adapter_id: str, entry: RegistryEntry, *, distribution: str = plugins.IN_PROCESS
) -> None:
    """Add an adapter at run time (plugins, tests). Validated before it becomes visible; an id
    that is taken stays taken (a built-in one above all)."""
    ensure_loaded()  # xpeval's own and the plugins' ids first: they are not taken by a call
    if adapter_id in ADAPTER_REGISTRY:
        origin = plugins.origin_of(PLUGIN_GROUP, adapter_id)
        raise RegistryError(f"Adapter {adapter_id} is already registered (by {origin})")
    candidate = {**ADAPTER_REGISTRY, adapter_id: entry}
    validate_registry(candidate)
    ADAPTER_REGISTRY[adapter_id] = entry
    plugins.record_origin(PLUGIN_GROUP, adapter_id, distribution)


def unregister_adapter(adapter_id: str) -> None:
    get_entry(adapter_id)
    if plugins.origin_of(PLUGIN_GROUP, adapter_id) == plugins.BUILTIN:
        raise RegistryError(f"Adapter {adapter_id} is built in; it cannot be unregistered")
    del ADAPTER_REGISTRY[adapter_id]
    plugins.forget_origin(PLUGIN_GROUP, adapter_id)


BUNDLED_ADAPTERS = {
    "mistral": "xpeval.bundled.mistral_chat:MISTRAL",
    "cohere": "xpeval.bundled.cohere_chat:COHERE",
    "bedrock-converse": "xpeval.bundled.bedrock_converse:BEDROCK",
}
"""Adapters xpeval ships written as plugins are (`xpeval/bundled/`), over the wires of
`catalog.BUNDLED_WIRES`."""


@dataclass
class _Loading:
    started: bool = False
    failure: BaseException | None = None


_LOADING = _Loading()
_LOCK = threading.RLock()


def ensure_loaded() -> None:
    """Register xpeval's bundled adapters and wires, then every installed plugin's, once per
    process; nothing is registered at import.

    Idempotent and safe to call from anywhere: the CLI, `run_suite` and the pytest plugin call it
    first, and every lookup of this module before reading the registry. Another thread waits
    for the load; a plugin asking the registry something while it loads sees what is loaded so
    far. A load that failed (xpeval's own bundled entries did not register) fails every later
    call too, rather than leave a registry that lacks them."""
    with _LOCK:
        if _LOADING.failure is not None:
            failure = _LOADING.failure
            raise RuntimeError(f"xpeval's adapters failed to load: {type(failure).__name__}: {failure}")
        if _LOADING.started:
            return
        _LOADING.started = True
        try:
            _load()
        except BaseException as exc:
            _LOADING.failure = exc
            raise


def _load() -> None:
    validate_registry(ADAPTER_REGISTRY)  # the wires it names: xpeval's own are registered on first use
    for adapter_id in ADAPTER_REGISTRY:
        plugins.record_origin(PLUGIN_GROUP, adapter_id, plugins.BUILTIN)
    for adapter_id, target in BUNDLED_ADAPTERS.items():
        module, _, attribute = target.partition(":")
        entry = getattr(importlib.import_module(module), attribute)
        register_adapter(adapter_id, entry, distribution=plugins.BUILTIN)
    catalog.load_wire_plugins(guards=[_RegistryWatch])  # before the adapters, whose entries name wires
    _load_adapter_plugins()


def _table(registry: Mapping[str, RegistryEntry] | None) -> Mapping[str, RegistryEntry]:
    """`registry` when a caller hands one in, else the loaded `ADAPTER_REGISTRY`."""
    if registry is not None:
        return registry
    ensure_loaded()
    return ADAPTER_REGISTRY
