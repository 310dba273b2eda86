"""Which wires exist: every one is a `WirePlugin`, xpeval's own (`BUNDLED_WIRES`) and those
plugins register, through the one `register_wire`.

A wire is a `WirePlugin`: its codec (an object implementing `Wire`: encode, decode plain
and streamed, errors, tool layout, paths, recorded-stream framing and the emulator's rendering),
the schema dialects it adds and the acceptance rules the checker judges its requests by. It is
registered from the `xpeval.wires` entry-point group (imported in the guarded step of
`xpeval.adapters.plugins`, like an adapter) or in-process by `register_wire`; either way it is
validated whole before any of it becomes visible, and a wire that fails is refused with one line
naming what to fix. A name that is taken stays taken, xpeval's own above all.
docs/plugin-api.md is the reference.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xpeval.adapters import plugins
from xpeval.adapters.contract import WireName
from xpeval.adapters.schema import apply, dialects, names
from xpeval.adapters.schema._types import DIALECTS
from xpeval.adapters.schema.dialects import DialectSpec
from xpeval.adapters.wires._base import Wire
from xpeval.adapters.wires._layout import ToolLayout
from xpeval.errors import DialectError, WireError

WIRE_GROUP = "xpeval.wires"
BUNDLED_WIRES = (
    "xpeval.adapters.wires.openai_chat:PLUGIN",
    "xpeval.adapters.wires.openai_responses:PLUGIN",
    "xpeval.adapters.wires.anthropic:PLUGIN",
    "xpeval.adapters.wires.google:PLUGIN",
    "xpeval.bundled.mistral_chat:MISTRAL_WIRE",
    "xpeval.bundled.cohere_chat:COHERE_WIRE",
    "xpeval.bundled.bedrock_converse:BEDROCK_WIRE",
)
"""Every wire xpeval ships, in order: its own (`adapters/wires/`) and those written against
`xpeval.plugin` only (`xpeval/bundled/`). Each is registered like a plugin's, by `register_wire`,
as xpeval's own and before any plugin, the first time any wire is asked for (never at import);
a wire not listed here does not exist."""
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_VARIANT = re.compile(r"[a-z0-9][a-z0-9._-]*")
_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
CODEC_METHODS = (
    "encode",
    "tool_layout",
    "tool_definitions",
    "validate_encoded",
    "send",
    "decode",
    "error_from_exception",
    "render",
    "is_stream",
    "recorded_model",
    "replayable_response",
    "minimal_request",
)
"""What a codec must have, besides `name` and `request_paths` (the `Wire` protocol)."""
_PROFILE_PARTS = ("name_checks", "tool_checks", "node_checks")


@dataclass(frozen=True)
class AcceptanceMode:
    """One rule set of the acceptance checker for a wire: which requests it judges (those its
    wire sends for `dialect` with `strict`) and the rules (`profile`, an `xpeval.plugin.Profile`)."""

    name: str
    """A plugin's: `<wire>` or `<wire>:<variant>` (so it never takes another wire's mode name)."""
    dialect: str
    profile: Any = None
    """None only for xpeval's own wires: the checker's own rule set of this name
    (`evals/acceptance/checker/rules/`, which the adapters never import)."""
    strict: bool | None = None
    max_tools: int | None = None
    """Tools one request may carry, judged by `max_tools_rule` (a `Rule`); None: no limit."""
    max_tools_rule: Any = None


@dataclass(frozen=True)
class WirePlugin:
    """Everything a plugin registers for one wire."""

    codec: Wire
    dialects: tuple[DialectSpec, ...] = ()
    acceptance: tuple[AcceptanceMode, ...] = ()
    batch_api: str | None = None
    """Its provider's Batch API for `xpeval run --batch`, as `"module:ATTR"` (an object of the
    `BatchApi` protocol, `xpeval.plugin`), imported when a batch run first asks for it; None:
    the wire's episodes play online (docs/batch.md)."""


_WIRES: dict[str, WirePlugin] = {}
"""Every wire registered in this process, by name, in registration order."""
_OWN_WIRES = threading.RLock()
_OWN_WIRES_ASKED = threading.Event()
"""Set once xpeval's own wires were asked for (`_ensure_own_wires`)."""
_OWN_WIRES_FAILED: list[BaseException] = []
"""Why registering them failed (xpeval's bug): every later lookup fails too, never partial."""


def _ensure_own_wires() -> None:
    """Register xpeval's own plugin wires (`BUNDLED_WIRES`) once per process, when a wire is first
    asked for. Other packages' wires come with `registry.ensure_loaded()`, which loads them under
    the guards of both registries (docs/plugins.md, "When plugins are loaded")."""
    with _OWN_WIRES:
        if _OWN_WIRES_FAILED:
            failure = _OWN_WIRES_FAILED[0]
            raise RuntimeError(f"xpeval's own wires failed to register: {type(failure).__name__}: {failure}")
        if _OWN_WIRES_ASKED.is_set():
            return  # loaded, or loading: a bundled module asking while it loads sees those before it
        _OWN_WIRES_ASKED.set()
        try:
            load_bundled_wires()
        except BaseException as exc:
            _OWN_WIRES_FAILED.append(exc)
            raise


def wire_names() -> tuple[WireName, ...]:
    """Every wire an entry can name, in registration order: xpeval's own, then plugins'."""
    _ensure_own_wires()
    return tuple(_WIRES)


def registered_wire(name: str) -> WirePlugin | None:
    """The `WirePlugin` registered as `name`, or None."""
    _ensure_own_wires()
    return _WIRES.get(name)


def is_builtin_wire(name: str) -> bool:
    """Whether `name` is one of xpeval's own wires (`BUNDLED_WIRES`)."""
    _ensure_own_wires()
    return plugins.origin_of(WIRE_GROUP, name) == plugins.BUILTIN


def acceptance_modes() -> dict[str, tuple[WireName, AcceptanceMode]]:
    """Every wire's acceptance modes, by mode name, with the wire they judge."""
    _ensure_own_wires()
    return {mode.name: (plugin.codec.name, mode) for plugin in _WIRES.values() for mode in plugin.acceptance}


def register_wire(plugin: WirePlugin, *, distribution: str = plugins.IN_PROCESS) -> None:
    """Register a plugin wire, its dialects and its acceptance rules, all or nothing;
    `WireError` (one line) when anything about it is wrong."""
    if distribution != plugins.BUILTIN:
        _ensure_own_wires()  # a name xpeval ships stays xpeval's, whichever is registered first
    problem = wire_problem(plugin, own=distribution == plugins.BUILTIN)
    if problem is not None:
        raise WireError(problem)
    for spec in plugin.dialects:
        dialects.register_dialect(spec)
    _WIRES[plugin.codec.name] = plugin
    plugins.record_origin(WIRE_GROUP, plugin.codec.name, distribution)


def unregister_wire(name: str) -> None:
    """Remove a plugin wire and its dialects (tests); xpeval's own stay."""
    if is_builtin_wire(name):
        raise WireError(f"wire {name} is built in; it cannot be unregistered")
    plugin = _WIRES.pop(name)
    plugins.forget_origin(WIRE_GROUP, name)
    for spec in plugin.dialects:
        dialects.unregister_dialect(spec.name)


def wire_problem(plugin: object, *, own: bool = False) -> str | None:
    """What is wrong with `plugin` as a wire to register, or None. `own`: one of xpeval's own
    (`BUNDLED_WIRES`), whose acceptance modes keep their historical names and may leave their
    rules to the checker."""
    if not isinstance(plugin, WirePlugin):
        return f"a wire plugin must be a WirePlugin, not a {type(plugin).__name__}"
    name = getattr(plugin.codec, "name", None)
    problem = _codec_problem(plugin.codec, name)
    if problem is not None:
        return problem
    assert isinstance(name, str)
    if plugin.batch_api is not None and not _TARGET.fullmatch(str(plugin.batch_api)):
        return f"wire {name}: batch_api must be 'module:ATTR', not {plugin.batch_api!r}"
    return _dialects_problem(name, plugin.dialects) or _acceptance_problem(name, plugin, own)


def _codec_problem(codec: object, name: object) -> str | None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return f"invalid wire name {name!r} (lower-case letters, digits, '.', '_' and '-')"
    if plugins.origin_of(WIRE_GROUP, name) == plugins.BUILTIN or name in DIALECTS:
        return f"wire {name} is one of xpeval's own names; a plugin cannot take it"
    if name in _WIRES:
        return f"wire {name} is already registered (by {plugins.origin_of(WIRE_GROUP, name)})"
    paths = getattr(codec, "request_paths", None)
    if not isinstance(paths, tuple) or not paths or not all(isinstance(p, re.Pattern) for p in paths):
        return f"wire {name}: request_paths must be a non-empty tuple of compiled re patterns"
    missing = [method for method in CODEC_METHODS if not callable(getattr(codec, method, None))]
    if missing:
        return f"wire {name}: its codec lacks {', '.join(missing)} (the Wire protocol: docs/plugin-api.md)"
    if not inspect.iscoroutinefunction(codec.send):  # type: ignore[attr-defined]
        return f"wire {name}: send must be an async method"
    return None


def _dialects_problem(wire: str, specs: object) -> str | None:
    if not isinstance(specs, tuple):
        return f"wire {wire}: dialects must be a tuple of DialectSpec"
    seen: set[str] = set()
    for spec in specs:
        problem = dialects.dialect_problem(spec)
        if problem is None and spec.name in seen:
            problem = f"dialect {spec.name} is listed twice"
        if problem is not None:
            return f"wire {wire}: {problem}"
        seen.add(spec.name)
    return None


def _acceptance_problem(wire: str, plugin: WirePlugin, own: bool) -> str | None:
    if not isinstance(plugin.acceptance, tuple):
        return f"wire {wire}: acceptance must be a tuple of AcceptanceMode"
    dialect_names = {spec.name for spec in plugin.dialects}
    taken = {mode.name: f"wire {name}'s" for name, other in _WIRES.items() for mode in other.acceptance}
    for mode in plugin.acceptance:
        problem = _mode_problem(wire, plugin.codec, mode, dialect_names, taken, own)
        if problem is not None:
            return f"wire {wire}: {problem}"
        taken[mode.name] = "listed twice"
    return None


def _mode_problem(
    wire: str, codec: Wire, mode: object, dialect_names: set[str], taken: dict[str, str], own: bool
) -> str | None:
    if not isinstance(mode, AcceptanceMode):
        return f"an acceptance mode must be an AcceptanceMode, not a {type(mode).__name__}"
    base, _, variant = mode.name.partition(":") if isinstance(mode.name, str) else ("", "", "")
    if own and isinstance(mode.name, str) and _NAME.fullmatch(mode.name):
        pass  # xpeval's own modes keep the names its reports and docs use
    elif base != wire or (variant and not _VARIANT.fullmatch(variant)) or mode.name.endswith(":"):
        return f"acceptance mode {mode.name!r} must be named {wire!r} or {wire + ':<variant>'!r}"
    if mode.name in taken:
        return f"acceptance mode {mode.name} is {taken[mode.name]}"
    if mode.dialect not in dialect_names and not dialects.is_dialect(mode.dialect):
        return f"acceptance mode {mode.name} names an unknown dialect: {mode.dialect}"
    if mode.strict is not None and not isinstance(mode.strict, bool):
        return f"acceptance mode {mode.name}: strict must be True, False or None"
    return _rules_problem(mode, own) or _layout_problem(codec, mode)


def _rules_problem(mode: AcceptanceMode, own: bool) -> str | None:
    if own and mode.profile is None and mode.max_tools is None:
        return None  # the checker's own rule set of this name (evals/acceptance/checker/rules/)
    missing = [part for part in _PROFILE_PARTS if not _callables(getattr(mode.profile, part, None))]
    if missing:
        return (
            f"acceptance mode {mode.name}: its profile is not a Profile "
            f"(no tuple of checks in {', '.join(missing)})"
        )
    if (mode.max_tools is None) != (mode.max_tools_rule is None) or (
        mode.max_tools is not None and (not isinstance(mode.max_tools, int) or mode.max_tools < 1)
    ):
        return f"acceptance mode {mode.name}: max_tools (a positive int) and max_tools_rule go together"
    return None


def _layout_problem(codec: Wire, mode: AcceptanceMode) -> str | None:
    try:
        layout = codec.tool_layout(mode.dialect, mode.strict)
    except Exception as exc:  # the plugin's code: its failure is its refusal
        return f"acceptance mode {mode.name}: tool_layout raised {type(exc).__name__}: {exc}"
    if not isinstance(layout, ToolLayout):
        return (
            f"acceptance mode {mode.name}: tool_layout returned a {type(layout).__name__}, not a ToolLayout"
        )
    return None


def _callables(value: object) -> bool:
    return isinstance(value, tuple) and all(callable(item) for item in value)


class WireWatch:
    """The wires and dialects as a plugin's import found them: which names exist (a plugin's
    wire is registered by xpeval from its entry point, never by the import itself) and what each
    one IS (`plugins.IdentityWatch`: its `WirePlugin`, its codec's class and every function of it
    and of its module, its dialects' passes and name rules). A plugin that replaces the bundled
    `mistral-chat` entry or wraps one of its codec's methods changes what every Mistral number
    means; it is refused and what it changed put back. xpeval's own wires are registered before
    any plugin loads, so each of their modules is watched as it was."""

    def __init__(self) -> None:
        self._wires = dict(_WIRES)
        self._dialects = dialects.snapshot()
        roots: list[tuple[str, object]] = []
        for name, plugin in _WIRES.items():
            roots += [
                (f"wire {name}", plugin),
                (f"wire {name}", sys.modules.get(type(plugin.codec).__module__)),
            ]
        for name, rules in apply.RULES.items():
            roots += [
                (f"dialect {name}", rules),
                (f"dialect {name}", sys.modules.get(type(rules).__module__)),
            ]
            roots.append((f"dialect {name}", names.NAME_RULES.get(name)))
        self._identity = plugins.IdentityWatch((label, root) for label, root in roots if root is not None)

    def check(self) -> plugins.Tampering | None:
        changed = sorted(set(_WIRES) ^ set(self._wires))
        tables = dialects.snapshot()
        changed_dialects = sorted(
            {k for new, old in zip(tables, self._dialects, strict=True) for k in new.keys() ^ old.keys()}
        )
        replaced = self._replaced(tables)
        if not changed and not changed_dialects and not replaced:
            return None
        self._identity.restore()
        _WIRES.clear()
        _WIRES.update(self._wires)
        dialects.restore(self._dialects)
        reasons = []
        if changed or changed_dialects:
            named = ", ".join([*(f"wire {n}" for n in changed), *(f"dialect {n}" for n in changed_dialects)])
            reasons.append(f"registered {named} while loading, outside its entry point")
        if replaced:
            what = "; ".join(
                f"{label} ({', '.join(sorted(set(m))[:4])})" for label, m in sorted(replaced.items())
            )
            reasons.append(f"replaced or wrapped xpeval's {what} while loading")
        # What it replaced is put back, so commands using it go on (ids name only what the
        # plugin itself would have added).
        return plugins.Tampering("; ".join(reasons), tuple(changed))

    def _replaced(self, tables: tuple[dict[str, Any], ...]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for label, members in self._identity.changed().items():
            found.setdefault(label, []).extend(members)
        for name, plugin in self._wires.items():
            if _WIRES.get(name, plugin) is not plugin:
                found.setdefault(f"wire {name}", []).append("its WirePlugin")
        for table, before in zip(tables, self._dialects, strict=True):
            for name, value in before.items():
                if table.get(name, value) is not value:
                    found.setdefault(f"dialect {name}", []).append("its table entry")
        return found


def load_bundled_wires() -> None:
    """Register every wire xpeval ships (`BUNDLED_WIRES`); one that fails is xpeval's bug, so it
    raises."""
    for target in BUNDLED_WIRES:
        module, _, attribute = target.partition(":")
        register_wire(getattr(importlib.import_module(module), attribute), distribution=plugins.BUILTIN)


def load_wire_plugins(guards: Sequence[Callable[[], plugins.Guard]] = ()) -> list[str]:
    """Register the wires other packages offer: entry points of `xpeval.wires`, each named by
    its wire and pointing at its `WirePlugin`. One that fails to load, changes what it must not,
    is offered twice, takes a built-in name, is not a `WirePlugin` or fails validation is not
    registered and is listed by `plugins.refused_plugins("xpeval.wires")`. Returns the names
    registered."""
    registered: list[str] = []
    reserved = (*wire_names(), *dialects.registered_dialects())
    for plugin in plugins.load_entry_points(WIRE_GROUP, reserved=reserved, guards=[WireWatch, *guards]):
        value = plugin.value
        if isinstance(value, WirePlugin) and getattr(value.codec, "name", None) != plugin.name:
            named = getattr(value.codec, "name", None)
            reason = f"its entry point is named {plugin.name} but its codec's name is {named!r}"
            plugins.refuse(plugin, WIRE_GROUP, reason)
            continue
        try:
            register_wire(value, distribution=plugin.distribution)  # type: ignore[arg-type]
        except (WireError, DialectError) as exc:
            plugins.refuse(plugin, WIRE_GROUP, str(exc))
            continue
        registered.append(plugin.name)
    return registered
