"""The guarded step in which other packages' plugins are imported, and what it refused.

A plugin is code of another distribution, found through an entry-point group and imported into
this process. Whatever that import does, it must not decide xpeval's exit status or change
what xpeval already had: `load_entry_points` imports each entry point under a guard, and a plugin
that raises anything (`SystemExit` and `KeyboardInterrupt` included), that changes what a
`Guard` watches, or whose name another distribution offers too, is a `RefusedPlugin`, listed by
`refused_plugins()`. The one thing let through is a real Ctrl-C (a SIGINT that arrived while
the plugin loaded): the user asked the process to stop. docs/plugins.md ("How plugins are
loaded and refused") says what each refusal means to a user.

Generic over the group: the adapter registry loads `xpeval.adapters` with it, and any other
registry that plugins extend loads its own group the same way; each records where what it
registered came from in the one origins table here (`record_origin`, `origin_of`).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import FrameType, FunctionType, ModuleType
from typing import Any, Protocol

SLOW_PLUGIN_SECONDS = 2.0
"""A plugin still importing after this long is named on stderr (so a slow one is not a hang)."""


@dataclass(frozen=True)
class RefusedPlugin:
    """An entry point that was not let in, and why."""

    distribution: str
    """The distribution (installed package) that offers it."""
    entry_point: str
    """`name = module:attribute`, as its distribution declares it."""
    reason: str
    group: str
    ids: tuple[str, ...]
    """What it meant to register (its entry point's name, which is the id it offers) and anything
    it changed while it loaded: a command using any of them fails closed."""

    def line(self) -> str:
        return f"plugin {self.entry_point} of {self.distribution} refused: {self.reason}"


@dataclass(frozen=True)
class LoadedPlugin:
    """An entry point that loaded cleanly: its name, its distribution and the object it named."""

    name: str
    distribution: str
    entry_point: str
    value: object


@dataclass(frozen=True)
class Tampering:
    """What a plugin's import changed that it must not have (already put back)."""

    reason: str
    ids: tuple[str, ...]


class Guard(Protocol):
    """A watch on something a plugin's import must leave as it found it: made before each
    plugin is imported, checked after."""

    def check(self) -> Tampering | None:
        """What changed since the watch was made (restored before returning), or None."""
        ...


GuardFactory = Callable[[], Guard]

BUILTIN = "xpeval"
"""The distribution of what xpeval ships: its built-in adapters and wires, and those it bundles
written as plugins are (`xpeval/bundled/`)."""
IN_PROCESS = "(registered in-process)"
"""Where an adapter or wire registered by a call (a conftest, a notebook) comes from."""

_REFUSED: list[RefusedPlugin] = []
_ORIGINS: dict[tuple[str, str], str] = {}
"""The distribution each registered adapter and wire comes from, by (group, name): the one
origins table of every registry plugins extend."""


def record_origin(group: str, name: str, distribution: str) -> None:
    _ORIGINS[group, name] = distribution


def forget_origin(group: str, name: str) -> None:
    _ORIGINS.pop((group, name), None)


def origin_of(group: str, name: str) -> str | None:
    """The distribution `name` of `group` was registered by (`BUILTIN` for xpeval's own), or
    None when it is not registered."""
    return _ORIGINS.get((group, name))


def refused_plugins(group: str | None = None) -> tuple[RefusedPlugin, ...]:
    """Every plugin refused in this process (of `group`, or of every group)."""
    return tuple(p for p in _REFUSED if group is None or p.group == group)


def distribution_name(point: EntryPoint) -> str:
    dist = point.dist
    name = dist.metadata["Name"] if dist is not None else None
    return str(name) if name else "an unknown distribution"


def declared(point: EntryPoint) -> str:
    return f"{point.name} = {point.value}"


def load_entry_points(
    group: str, *, reserved: Collection[str] = (), guards: Sequence[GuardFactory] = ()
) -> list[LoadedPlugin]:
    """Import every entry point of `group` under the guard; the ones that loaded cleanly.

    Refused without being imported: a name in `reserved` (xpeval's own ids) and a name offered
    by two distributions (neither wins: which one would is an accident of the path order).
    Refused after importing: anything raised, and any change a guard sees (put back first)."""
    points = list(entry_points(group=group))
    offered: dict[str, list[EntryPoint]] = {}
    for point in points:
        offered.setdefault(point.name, []).append(point)
    loaded: list[LoadedPlugin] = []
    for name, rivals in offered.items():
        if len(rivals) > 1:  # one refusal naming every distribution, none of them imported
            dists = sorted(rivals, key=distribution_name)
            _REFUSED.append(
                RefusedPlugin(
                    " and ".join(distribution_name(p) for p in dists),
                    name,
                    f"each offers the id {name} ({', '.join(p.value for p in dists)}); neither is "
                    "loaded, uninstall all but one",
                    group,
                    (name,),
                )
            )
    for point in points:
        if len(offered[point.name]) > 1:
            continue
        if point.name in reserved:
            _refuse(point, group, f"{point.name} is one of xpeval's own; a plugin cannot replace it")
        else:
            plugin = _guarded_load(point, group, guards)
            if plugin is not None:
                loaded.append(plugin)
    return loaded


def refuse(point: LoadedPlugin, group: str, reason: str) -> None:
    """Refuse a plugin that loaded but whose object the registry does not accept."""
    _REFUSED.append(RefusedPlugin(point.distribution, point.entry_point, reason, group, (point.name,)))


def _refuse(point: EntryPoint, group: str, reason: str, ids: Sequence[str] = ()) -> None:
    named = tuple(dict.fromkeys([point.name, *ids]))
    _REFUSED.append(RefusedPlugin(distribution_name(point), declared(point), reason, group, named))


def _guarded_load(point: EntryPoint, group: str, guards: Sequence[GuardFactory]) -> LoadedPlugin | None:
    watches = [make() for make in guards]
    interrupted = threading.Event()
    try:
        with _named_when_slow(point), _ctrl_c_noticed(interrupted):
            value = point.load()
    except KeyboardInterrupt:
        if interrupted.is_set():
            raise  # the user pressed Ctrl-C: stop, whatever was loading
        failure: str | None = "raised KeyboardInterrupt while loading, without a Ctrl-C"
    except SystemExit as exc:
        failure = f"called sys.exit({exc.code!r}) while loading"
    except BaseException as exc:  # nothing a plugin raises may end the command
        failure = f"cannot load {point.value}: {type(exc).__name__}: {exc}"
    else:
        failure = None
    if interrupted.is_set():
        raise KeyboardInterrupt  # a plugin that swallowed the user's Ctrl-C does not cancel it
    tampered = [found for found in (watch.check() for watch in watches) if found is not None]
    if tampered:
        reasons = "; ".join(t.reason for t in tampered)
        ids = [i for t in tampered for i in t.ids]
        _refuse(point, group, f"{reasons} (put back as xpeval ships it)", ids)
        return None
    if failure is not None:
        _refuse(point, group, failure)
        return None
    return LoadedPlugin(point.name, distribution_name(point), declared(point), value)


@contextmanager
def _ctrl_c_noticed(interrupted: threading.Event) -> Iterator[None]:
    """Note whether a SIGINT arrives while a plugin loads, then handle it as before.

    A `KeyboardInterrupt` raised by a real Ctrl-C and one a plugin raises itself are the same
    exception; the signal is what tells them apart. Signals reach only the main thread, so
    outside it every `KeyboardInterrupt` was raised by code."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def noticed(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, noticed)
    except (ValueError, OSError):  # an embedding interpreter that owns its signals
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


@contextmanager
def _named_when_slow(point: EntryPoint) -> Iterator[None]:
    """A line on stderr if the plugin is still importing after `SLOW_PLUGIN_SECONDS`."""
    started = time.monotonic()

    def say() -> None:
        print(
            f"xpeval: loading plugin {declared(point)} of {distribution_name(point)} "
            f"(more than {SLOW_PLUGIN_SECONDS:g} s so far)...",
            file=sys.stderr,
            flush=True,
        )

    notice = threading.Timer(SLOW_PLUGIN_SECONDS, say)
    notice.name = "xpeval-slow-plugin-notice"
    notice.daemon = True
    notice.start()
    try:
        yield
    finally:
        notice.cancel()
        if time.monotonic() - started > SLOW_PLUGIN_SECONDS:
            notice.join()  # its line, then this one: never the other way round
            print(
                f"xpeval: plugin {declared(point)} took {time.monotonic() - started:.1f} s to import",
                file=sys.stderr,
                flush=True,
            )


class IdentityWatch:
    """What some objects ARE, not only what they are called: the identity of every value their
    namespaces hold, as a plugin's import found them.

    From each root it watches what a plugin could change in place: an object's class
    (`__class__`) and instance attributes; every member of each class of the watched packages
    (xpeval's, and the root's own) in its MRO; every function's code, defaults and closure; the
    functions, classes and objects a watched module holds from those packages; the members of
    tuples and of dicts reached from them. Replacing an entry, wrapping one of its methods or
    rebinding a helper of its module is a change: nothing is compared by name or by equality.
    `changed()` names what changed; `restore()` puts back what the watch saw."""

    def __init__(self, roots: Iterable[tuple[str, object]]) -> None:
        self._spaces: list[tuple[str, _Space]] = []
        seen: set[int] = set()
        for label, root in roots:
            packages = {"xpeval", _package(root)} - {""}
            self._spaces.extend((label, space) for space in _spaces_of(root, seen, packages))

    def changed(self) -> dict[str, list[str]]:
        """Root label -> the members that are no longer what they were (empty: nothing changed)."""
        found: dict[str, list[str]] = {}
        for label, space in self._spaces:
            members = space.changed()
            if members:
                found.setdefault(label, []).extend(members)
        return found

    def restore(self) -> None:
        for _, space in self._spaces:
            space.restore()


_FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__", "__closure__")
_CALLED_DUNDERS = frozenset({"__init__", "__call__", "__post_init__", "__new__", "__getattr__"})
_ABSENT = object()


@dataclass
class _Space:
    """One namespace: `holder`'s members and the objects they held. `items`: `holder` is a
    dict (a module's or an instance's namespace); `of_class`: `holder` is a class."""

    holder: Any
    name: str
    values: dict[str, object]
    items: bool = False
    closed: bool = False
    """A member added since is a change too (an instance's or a class's namespace: a new member
    there shadows what was inherited)."""

    def _members(self) -> Iterable[str]:
        if self.items:
            return list(self.holder)
        return list(vars(self.holder)) if isinstance(self.holder, type) else ()

    def added(self) -> list[str]:
        if not self.closed:
            return []
        return [m for m in self._members() if m not in self.values and _watched_member(m)]

    def current(self, member: str) -> object:
        if self.items:
            return self.holder.get(member, _ABSENT)
        if isinstance(self.holder, type):
            return self.holder.__dict__.get(member, _ABSENT)
        return getattr(self.holder, member, _ABSENT)

    def changed(self) -> list[str]:
        replaced = [m for m, value in self.values.items() if self.current(m) is not value]
        return [f"{self.name}.{m}" for m in [*replaced, *self.added()]]

    def restore(self) -> None:
        for member in self.added():
            if self.items:
                del self.holder[member]
            else:
                delattr(self.holder, member)
        for member, value in self.values.items():
            if self.current(member) is value:
                continue
            if self.items:
                self.holder[member] = value
            elif isinstance(self.holder, type):
                setattr(self.holder, member, value)
            else:
                object.__setattr__(self.holder, member, value)  # functions, frozen dataclasses too


def _package(thing: object) -> str:
    name = thing.__name__ if isinstance(thing, ModuleType) else getattr(type(thing), "__module__", "")
    return str(name or "").partition(".")[0]


def _ours(thing: object, packages: set[str]) -> bool:
    module = getattr(thing, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] in packages


def _watched_member(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__")) or name in _CALLED_DUNDERS


def _spaces_of(root: object, seen: set[int], packages: set[str]) -> Iterator[_Space]:
    """Every namespace reachable from `root` that the watched packages' code owns."""
    stack: list[object] = [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        spaces, below = _namespaces(node, packages)
        yield from spaces
        stack.extend(below)


def _namespaces(node: object, packages: set[str]) -> tuple[list[_Space], list[object]]:
    """The namespaces `node` itself holds, and the objects to look at below it."""
    if isinstance(node, ModuleType):
        held = {
            k: v
            for k, v in vars(node).items()
            if _watched_member(k) and (_ours(v, packages) or _ours(type(v), packages))
        }
        return [_Space(vars(node), node.__name__, held, items=True)], list(held.values())
    if isinstance(node, type):
        if not _ours(node, packages):
            return [], []
        members = {k: v for k, v in vars(node).items() if _watched_member(k)}
        return [_Space(node, node.__qualname__, members, closed=True)], [*members.values(), *node.__mro__[1:]]
    if isinstance(node, FunctionType):
        return [_Space(node, node.__qualname__, {p: getattr(node, p) for p in _FUNCTION_PARTS})], []
    if isinstance(node, classmethod | staticmethod):
        return [], [node.__func__]
    if isinstance(node, property):
        return [], [node.fget, node.fset, node.fdel]
    if isinstance(node, tuple | frozenset):
        return [], list(node)
    if isinstance(node, dict):
        return [_Space(node, "dict", dict(node), items=True)], list(node.values())
    if not _ours(type(node), packages):
        return [], []
    label = type(node).__qualname__
    spaces = [_Space(node, label, {"__class__": type(node)})]
    below: list[object] = [type(node)]
    if hasattr(node, "__dict__"):
        spaces.append(_Space(vars(node), label, dict(vars(node)), items=True, closed=True))
        below.extend(vars(node).values())
    return spaces, below
