"""ADAPTER_REGISTRY: the single authority on which adapters exist.

A direct entry names its wire and schema dialect; a wrapper entry names a `contract_parent`
and inherits the parent's wire contract (and so its conformance tests) while constructing
itself with its own factory. Inheritance of contract is not inheritance of constructor.

Every adapter id that comes from outside (CLI flag, config, a results file) is an untrusted
string until `get_entry` / `effective_contract` accepts it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from xpeval.adapters.adapter import Adapter, AdapterFactory, AdapterSettings, Capabilities, EffectiveContract
from xpeval.adapters.contract import WIRE_NAMES, WireName
from xpeval.adapters.providers import anthropic, azure, google, openai, vertex
from xpeval.adapters.providers._spec import Provider
from xpeval.adapters.providers.mimo import MIMO
from xpeval.adapters.providers.moonshot import MOONSHOT
from xpeval.adapters.providers.openai_compatible import OPENAI_COMPATIBLE
from xpeval.adapters.schema import DIALECTS, Dialect


class UnknownAdapterError(LookupError):
    """An adapter id (or a contract parent) that the registry does not know."""

    def __init__(self, adapter_id: str) -> None:
        problem = PLUGIN_PROBLEMS.get(adapter_id) if isinstance(adapter_id, str) else None
        detail = f" (its plugin entry point was refused: {problem})" if problem else ""
        super().__init__(f"Unknown adapter: {adapter_id}{detail}")
        self.adapter_id = adapter_id

    def __str__(self) -> str:
        return str(self.args[0])


class RegistryError(ValueError):
    """The registry itself is inconsistent (a cycle, a bad wire or dialect)."""


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
    factory: AdapterFactory
    schema_dialect: Dialect | None = None
    """Set only where this provider's schema dialect differs from its parent's."""
    description: str = ""
    capabilities: Capabilities | None = None
    """Set only where this provider supports something else than its parent."""

    kind: ClassVar[Literal["wrapper"]] = "wrapper"


RegistryEntry = DirectEntry | WrapperEntry

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
        capabilities=Capabilities(strict_schemas=True),
    ),
    "anthropic-messages": DirectEntry(
        wire="anthropic-messages",
        schema_dialect="anthropic",
        provider=anthropic.ANTHROPIC,
        factory=anthropic.create,
        description="Anthropic Messages",
    ),
    "google-genai": DirectEntry(
        wire="google-genai",
        schema_dialect="gemini-json-schema",
        provider=google.GEMINI,
        factory=google.create,
        description="Gemini Developer API (parametersJsonSchema)",
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
        factory=openai.create,
        schema_dialect="moonshot",
        description="Moonshot / Kimi (OpenAI Chat wire, Moonshot-flavoured JSON Schema)",
    ),
    "mimo": WrapperEntry(
        contract_parent="openai-chat",
        provider=MIMO,
        factory=openai.create,
        description="Xiaomi MiMo (OpenAI Chat wire)",
    ),
    "openai-compatible": WrapperEntry(
        contract_parent="openai-chat",
        provider=OPENAI_COMPATIBLE,
        factory=openai.create,
        description="Any OpenAI-compatible server: vLLM, llama.cpp, Ollama, OpenRouter, Groq",
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
    """The entry for `adapter_id`, or `UnknownAdapterError("Unknown adapter: <id>")`."""
    reg = ADAPTER_REGISTRY if registry is None else registry
    if not isinstance(adapter_id, str) or adapter_id not in reg:
        raise UnknownAdapterError(str(adapter_id))
    return reg[adapter_id]


def effective_contract(
    adapter_id: str, registry: Mapping[str, RegistryEntry] | None = None
) -> EffectiveContract:
    """Follow contract parents (with a visited set) to the direct wire. Fails closed on an
    unknown id or parent (`UnknownAdapterError`) and on a cycle (`RegistryError`)."""
    reg = ADAPTER_REGISTRY if registry is None else registry
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
PLUGIN_PROBLEMS: dict[str, str] = {}
"""Adapter ids offered by an installed package's entry point and refused, with the reason."""


def load_plugins(group: str = PLUGIN_GROUP) -> list[str]:
    """Register the adapters other packages offer: entry points of `group`, each named by its
    adapter id and pointing at its registry entry (a `DirectEntry` or `WrapperEntry`).

    Each is validated exactly like a built-in entry; one that fails (it does not load, is not
    an entry, names an unknown parent, makes a cycle, clashes with a built-in id) is not
    registered, so using its id fails closed with `Unknown adapter: <id>` and the reason.
    Entries may build on each other in any order. Returns the ids registered."""
    from importlib.metadata import entry_points

    pending: dict[str, RegistryEntry] = {}
    for point in entry_points(group=group):
        try:
            entry = point.load()
        except Exception as exc:  # a broken plugin must not break xpeval
            PLUGIN_PROBLEMS[point.name] = f"cannot load {point.value}: {type(exc).__name__}: {exc}"
            continue
        if not isinstance(entry, DirectEntry | WrapperEntry):
            PLUGIN_PROBLEMS[point.name] = f"{point.value} is not a DirectEntry or WrapperEntry"
        elif point.name in ADAPTER_REGISTRY:
            PLUGIN_PROBLEMS[point.name] = "the id is already registered"
        else:
            pending[point.name] = entry
    registered: list[str] = []
    while pending:
        progress = False
        for adapter_id, entry in list(pending.items()):
            try:
                register_adapter(adapter_id, entry)
            except (UnknownAdapterError, RegistryError) as exc:
                PLUGIN_PROBLEMS[adapter_id] = str(exc)
                continue
            PLUGIN_PROBLEMS.pop(adapter_id, None)
            registered.append(adapter_id)
            del pending[adapter_id]
            progress = True
        if not progress:
            break
    return registered


def validate_registry(registry: Mapping[str, RegistryEntry]) -> None:
    """Every id resolves to a known wire and dialect; raises on the first problem."""
    for adapter_id, entry in registry.items():
        if not isinstance(adapter_id, str) or not _ID.fullmatch(adapter_id):
            raise RegistryError(
                f"Invalid adapter id: {adapter_id!r} (letters, digits, '.', '_' and '-', starting with a "
                "letter or digit: it names cassette folders and CLI flags)"
            )
        if isinstance(entry, DirectEntry) and entry.wire not in WIRE_NAMES:
            raise RegistryError(f"Adapter {adapter_id} names an unknown wire: {entry.wire}")
        if entry.schema_dialect is not None and entry.schema_dialect not in DIALECTS:
            raise RegistryError(
                f"Adapter {adapter_id} names an unknown schema dialect: {entry.schema_dialect}"
            )
        if not callable(entry.factory):
            raise RegistryError(f"Adapter {adapter_id} has no factory")
        if not isinstance(entry.provider, Provider):
            raise RegistryError(f"Adapter {adapter_id} states no provider")
        if entry.capabilities is not None and not isinstance(entry.capabilities, Capabilities):
            raise RegistryError(f"Adapter {adapter_id} declares capabilities that are not a Capabilities")
        effective_contract(adapter_id, registry)


def adapter_ids(registry: Mapping[str, RegistryEntry] | None = None) -> list[str]:
    return list(ADAPTER_REGISTRY if registry is None else registry)


def direct_adapter_for_wire(wire: WireName, registry: Mapping[str, RegistryEntry] | None = None) -> str:
    """The id of the direct adapter that owns `wire`."""
    reg = ADAPTER_REGISTRY if registry is None else registry
    for adapter_id, entry in reg.items():
        if isinstance(entry, DirectEntry) and entry.wire == wire:
            return adapter_id
    raise RegistryError(f"No direct adapter speaks the {wire} wire")


def create_adapter(adapter_id: str, settings: AdapterSettings | None = None) -> Adapter:
    """Construct the adapter registered under `adapter_id` with its own factory."""
    entry = get_entry(adapter_id)
    contract = effective_contract(adapter_id)
    return entry.factory(contract, entry.provider, settings or AdapterSettings())


def provider_of(adapter_id: str) -> Provider:
    """The provider data of an adapter: its key variables, default model, secret headers."""
    return get_entry(adapter_id).provider


def providers() -> list[Provider]:
    """Every registered adapter's provider, once each (what scrubbing and log filters cover)."""
    return list({id(entry.provider): entry.provider for entry in ADAPTER_REGISTRY.values()}.values())


def register_adapter(adapter_id: str, entry: RegistryEntry) -> None:
    """Add an adapter at run time (plugins, tests). Validated before it becomes visible."""
    candidate = {**ADAPTER_REGISTRY, adapter_id: entry}
    validate_registry(candidate)
    ADAPTER_REGISTRY[adapter_id] = entry


def unregister_adapter(adapter_id: str) -> None:
    get_entry(adapter_id)
    del ADAPTER_REGISTRY[adapter_id]


validate_registry(ADAPTER_REGISTRY)
load_plugins()
