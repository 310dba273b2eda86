"""A tool environment at run time: instances of a case's classes, their methods called as tools.

What a call answers follows BFCL's executor (`multi_turn_utils.execute_multi_turn_func_call` in
bfcl-eval 2026.3.23), so the texts a model sees and the results the state verdict compares are
BFCL's: a string result as it is, a dict as JSON (its `str` when JSON cannot hold it), anything
else as `str`; a call that raises answers `Error during execution: <message>`. The method names
BFCL refuses to run (`kill`, `exit`, ... `run`) are refused the same way.

Where xpeval differs on purpose: a call runs as `method(**arguments)`, never as evaluated
source, so a name that is not a public method of the environment answers BFCL's `name '<x>' is
not defined` instead of running a Python builtin of that name, and a method name followed by
`(` inside a string argument is passed as written (BFCL's text rewrite prefixes it with its
instance name).

Isolation (docs/cases.md, "Tool environments", says what it does not cover): every call (and
every scenario load) runs in this process under `guarded`, which refuses the host's file
system, processes, network, native code and new imports through an audit hook (PEP 578), and
stops the call once it passes its time or memory bound; both bounds are checked at every
function call and return inside it.
"""

from __future__ import annotations

import _strptime  # noqa: F401  # datetime.strptime imports it on first use; a guarded call may not import
import copy
import importlib
import inspect
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import FrameType
from typing import Any, TypeVar

try:
    import resource
except ImportError:  # not on Windows: there the memory bound is not checked
    resource = None  # type: ignore[assignment]

from xpeval.errors import UserError
from xpeval.evals.cases.environment import (
    BFCL_INSTALL_HINT,
    BFCL_STATELESS,
    ENVIRONMENT_CLASSES,
    Environment,
    EnvironmentKind,
)
from xpeval.evals.runtime.tool_errors import describe_exception

DEFAULT_TIME_LIMIT_S = 5.0
DEFAULT_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024

REFUSED_METHODS = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
"""Names BFCL's executor refuses to run whatever they belong to."""

_BLOCKED_EVENTS = ("open", "os.", "subprocess.", "socket.", "shutil.", "ctypes.", "urllib.", "http.")
_BLOCKED_EXACT = frozenset({"webbrowser.open", "ftplib.connect", "smtplib.connect", "import"})
"""Audit events (PEP 578) refused while a guarded call runs: the host's files, processes,
network, native code, and new imports (which read files)."""


class EnvironmentUnavailable(UserError):
    """The environment's classes cannot be loaded (bfcl-eval not installed, or not as expected):
    one line saying how to install them, exit 2 (nothing about the case can be told)."""


class EnvironmentLimit(BaseException):
    """A guarded call crossed a bound or reached for the host. A BaseException, so the handlers'
    own `except Exception` (BFCL's methods catch everything) cannot swallow it."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one guarded call."""

    time_s: float = DEFAULT_TIME_LIMIT_S
    memory_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES


DEFAULT_LIMITS = Limits()

_guard = threading.local()
_hook_lock = threading.Lock()
_hook_installed = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not getattr(_guard, "active", False):
        return
    if event in _BLOCKED_EXACT or event.startswith(_BLOCKED_EVENTS):
        _guard.active = False  # raised once; the handler's cleanup may then run unguarded code paths
        raise EnvironmentLimit(f"the environment may not use the host ({event})")


def _install_hook() -> None:
    global _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_audit)  # process-wide and permanent; inert unless a guarded call runs
            _hook_installed = True


T = TypeVar("T")


def _peak_rss_bytes() -> int:
    """This process's peak resident size so far (0 where the platform cannot say)."""
    if resource is None:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux counts kilobytes


def guarded(function: Callable[[], T], limits: Limits = DEFAULT_LIMITS) -> T:
    """`function()` with the host refused and its time and memory bounded (`EnvironmentLimit`).

    The bounds are checked at every function call and return inside it (Python's profile hook):
    a loop that calls nothing, or one long native operation, runs to its end. Memory is the
    process's peak resident size, which may grow by at most `limits.memory_bytes` during the call.
    """
    _install_hook()
    deadline = time.monotonic() + limits.time_s
    ceiling = _peak_rss_bytes() + limits.memory_bytes

    events = itertools.count()

    def check(frame: FrameType, event: str, arg: Any) -> None:
        if time.monotonic() > deadline:
            raise EnvironmentLimit(f"the call ran past its time bound ({limits.time_s:g} s)")
        # asked every 256 events (a system call each time); a call is stopped at the first check
        # after its growth crosses the bound, not before one native allocation
        if next(events) % 256 == 0 and resource is not None and _peak_rss_bytes() > ceiling:
            raise EnvironmentLimit(f"the call grew past its memory bound ({limits.memory_bytes} bytes)")

    previous = sys.getprofile()
    _guard.active = True
    sys.setprofile(check)
    try:
        return function()
    finally:
        sys.setprofile(previous)
        _guard.active = False


def load_class(name: str, kind: EnvironmentKind = "bfcl") -> type:
    """The class `name` of the family `kind`: bfcl's imported from the installed bfcl-eval,
    retail's from xpeval itself."""
    module_name = ENVIRONMENT_CLASSES[kind].get(name)
    if module_name is None:
        raise EnvironmentUnavailable(f"{name!r} is not a {kind} environment class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if kind != "bfcl":  # xpeval's own module: nothing to install
            raise EnvironmentUnavailable(
                f"environment class {name} cannot be imported ({describe_exception(exc)})"
            ) from exc
        raise EnvironmentUnavailable(
            f"environment class {name} needs bfcl-eval ({describe_exception(exc)}); {BFCL_INSTALL_HINT}"
        ) from exc
    found = getattr(module, name, None)
    if not isinstance(found, type):
        raise EnvironmentUnavailable(f"{module_name} has no class {name}; {BFCL_INSTALL_HINT}")
    return found


def result_text(value: Any) -> str:
    """A method's return value as BFCL's executor turns it into text."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What one call answered: its text, and whether it was an error."""

    text: str
    error: bool


class ToolEnvironment:
    """Fresh instances of an environment's classes, loaded with the case's initial state."""

    def __init__(self, spec: Environment, limits: Limits = DEFAULT_LIMITS) -> None:
        self.spec = spec
        self.limits = limits
        self.instances: dict[str, Any] = {}
        self._methods: dict[str, Callable[..., Any]] = {}
        for name in spec.classes:
            instance = load_class(name, spec.kind)()
            if not (spec.kind == "bfcl" and name in BFCL_STATELESS):
                scenario = copy.deepcopy(spec.initial_state.get(name, {}))
                guarded(partial(instance._load_scenario, scenario, long_context=spec.long_context), limits)
            self.instances[name] = instance
        for instance in self.instances.values():  # a later class's method wins, as in BFCL's mapping
            for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method_name.startswith("_"):
                    self._methods[method_name] = method

    @property
    def method_names(self) -> list[str]:
        return sorted(self._methods)

    def call(self, name: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Run one call (never raises): its BFCL result text, or the error text."""
        method = self._methods.get(name)
        if name in REFUSED_METHODS:
            return _error(f"Function call {name} is not allowed.")
        if method is None:
            return _error(f"name '{name}' is not defined")
        if not all(isinstance(key, str) for key in arguments):
            return _error("keywords must be strings")
        kwargs = copy.deepcopy(dict(arguments))
        try:
            value = guarded(lambda: method(**kwargs), self.limits)
            return CallOutcome(text=guarded(lambda: result_text(value), self.limits), error=False)
        except EnvironmentLimit as exc:
            return _error(str(exc))
        except Exception as exc:
            return _error(_message(exc))


def _message(exc: BaseException) -> str:
    """`str(exc)`, as BFCL's executor writes it (also when empty); a broken `__str__` says its type."""
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__


def _error(message: str) -> CallOutcome:
    return CallOutcome(text=f"Error during execution: {message}", error=True)


__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MEMORY_LIMIT_BYTES",
    "DEFAULT_TIME_LIMIT_S",
    "CallOutcome",
    "EnvironmentLimit",
    "EnvironmentUnavailable",
    "Limits",
    "ToolEnvironment",
    "guarded",
    "load_class",
    "result_text",
]
