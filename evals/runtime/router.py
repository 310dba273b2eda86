"""The tool router: dispatch with per-action approval and an append-only audit.

Its rules are in docs/ARCHITECTURE.md, "The tool runtime".

Three structures carry it: a dict of routes keyed by name, a dict of pending requests keyed
by request id, and the audit log. Dispatch never raises: every path out is a `CallResult`.
Not thread-safe: one router per thread or event loop.
"""

from __future__ import annotations

import copy
import inspect
import secrets
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xpeval.evals.runtime.arguments import check_arguments
from xpeval.evals.runtime.audit import DEFAULT_WINDOW, AuditLog, AuditOutcome, AuditRow, TextSink
from xpeval.evals.runtime.clock import now_ms as wall_clock_ms
from xpeval.evals.runtime.tool_errors import ToolRouterError, describe_exception, display_name
from xpeval.evals.runtime.tool_registry import ToolRegistry

Handler = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class CallResult:
    """What a call, approve or deny answers (the shapes docs/ARCHITECTURE.md, "The tool runtime", lists).

    ok: the handler ran and returned `value` (0, False, None and "" are successes).
    pending: the call awaits approval under `request_id`; the handler has not run.
    denied / expired: the gated request was refused / outlived its TTL (distinct outcomes).
    `error` is a one-line message whenever the result is neither ok nor pending.
    """

    ok: bool
    value: Any = None
    error: str | None = None
    pending: bool = False
    request_id: str | None = None
    denied: bool = False
    expired: bool = False


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A gated call waiting for a decision; the id is bound to `tool` and `arguments` at issue."""

    request_id: str
    tool: str
    arguments: Any
    issued_at_ms: int


@dataclass(frozen=True, slots=True)
class _Route:
    handler: Handler
    requires_approval: bool
    input_model: type[BaseModel] | None


def new_request_id() -> str:
    """A nonce: never derived from the tool name or arguments, so identical calls get distinct ids."""
    return "req-" + secrets.token_hex(16)


class ToolRouter:
    """Routes tool calls to handlers, gates some behind per-action approval, audits every attempt."""

    def __init__(
        self,
        *,
        approval_ttl_ms: int | None = None,
        audit_window: int = DEFAULT_WINDOW,
        audit_sink: str | Path | TextSink | None = None,
    ) -> None:
        """`approval_ttl_ms`: a pending request older than this answers `expired` (None: never).
        `audit_window` rows stay in memory; `audit_sink` (path or text file) receives every row."""
        if approval_ttl_ms is not None and (not isinstance(approval_ttl_ms, int) or approval_ttl_ms < 0):
            raise ValueError(
                f"approval_ttl_ms must be a non-negative integer or None, got {approval_ttl_ms!r}"
            )
        self._routes: dict[str, _Route] = {}
        self._pending: dict[str, PendingRequest] = {}
        self._audit = AuditLog(window=audit_window, sink=audit_sink)
        self._ttl_ms = approval_ttl_ms

    @classmethod
    def from_registry(
        cls,
        registry: ToolRegistry,
        *,
        requires_approval: Collection[str] = (),
        approval_ttl_ms: int | None = None,
        audit_window: int = DEFAULT_WINDOW,
        audit_sink: str | Path | TextSink | None = None,
    ) -> ToolRouter:
        """A router serving every registry tool, validating with its input model.

        A tool without a handler answers with its validated arguments (a terminal tool such as
        `answer_user` has nothing to run: its arguments are the outcome). Every id in
        `requires_approval` must be registered.
        """
        router = cls(approval_ttl_ms=approval_ttl_ms, audit_window=audit_window, audit_sink=audit_sink)
        gated = set(requires_approval)
        for tool_id in gated:
            registry.require(tool_id)
        for definition in registry:
            router.register(
                definition.id,
                definition.handler or _echo_arguments,
                requires_approval=definition.id in gated,
                input_model=definition.input_model,
            )
        return router

    def register(
        self,
        name: str,
        handler: Handler,
        requires_approval: bool = False,
        *,
        input_model: type[BaseModel] | None = None,
    ) -> None:
        """Add a route. Refuses a blank or duplicate name and a handler that is not callable.

        The handler gets the validated `input_model` instance, or the arguments dict when
        there is no model.
        """
        if not isinstance(name, str) or not name.strip():
            raise ToolRouterError(f"tool name must be a non-blank string, got {name!r}")
        if name in self._routes:
            raise ToolRouterError(f"duplicate tool name: {name}")
        if not callable(handler):
            raise ToolRouterError(f"tool {name}: handler must be callable")
        self._routes[name] = _Route(
            handler=handler, requires_approval=bool(requires_approval), input_model=input_model
        )

    def has(self, name: object) -> bool:
        """Whether a route exists: a dict-key test, so `toString`/`__class__` are not routes."""
        return isinstance(name, str) and name in self._routes

    def call(self, name: str, args: object = None, now_ms: int | None = None) -> CallResult:
        """Dispatch one call. Never raises for anything a tool or a model does.

        Unknown name -> `unknown tool: <name>`; arguments that fail validation -> invalid;
        a gated tool -> pending with a fresh nonce id (the handler does not run; its decision
        will be a second audit row, never an edit of this one); otherwise the handler runs and
        its value (falsy included) is the success.
        """
        at = self._now(now_ms)
        route = self._routes.get(name) if isinstance(name, str) else None
        tool = display_name(name)
        if route is None:
            error = f"unknown tool: {tool}"
            self._log(tool, "unknown_tool", at, error=error)
            return CallResult(ok=False, error=error)
        checked = check_arguments(route.input_model, args)
        if not checked.ok:
            error = f"invalid arguments for {tool}: {checked.error}"
            self._log(tool, "invalid_args", at, error=error)
            return CallResult(ok=False, error=error)
        if not route.requires_approval:
            result = _invoke(route.handler, checked.value)
            self._log(tool, "ok" if result.ok else "error", at, error=result.error)
            return result
        try:
            # Bound at issue time: a caller mutating its arguments later cannot change what runs.
            bound = copy.deepcopy(checked.value)
        except RecursionError:
            error = f"invalid arguments for {tool}: arguments nest too deeply to hold for approval"
            self._log(tool, "invalid_args", at, error=error)
            return CallResult(ok=False, error=error)
        except Exception as exc:
            error = f"invalid arguments for {tool}: cannot hold them for approval: {describe_exception(exc)}"
            self._log(tool, "invalid_args", at, error=error)
            return CallResult(ok=False, error=error)
        request_id = new_request_id()
        while request_id in self._pending:  # a 128-bit nonce collision: astronomically rare, still refused
            request_id = new_request_id()
        self._pending[request_id] = PendingRequest(
            request_id=request_id, tool=tool, arguments=bound, issued_at_ms=at
        )
        self._log(tool, "pending", at, request_id=request_id)
        return CallResult(ok=False, pending=True, request_id=request_id)

    def approve(self, request_id: str, approver: str | None = None, now_ms: int | None = None) -> CallResult:
        """Run a pending request's bound call, once.

        The pending entry is removed before the handler runs, so a raising handler still spends
        it; a spent or never-issued id answers `unknown request: <id>` and logs nothing. Logs
        `approved`, or `error` when the handler raised (the audit says what happened).
        """
        at = self._now(now_ms)
        request = self._take(request_id)
        if request is None:
            return _unknown_request(request_id)
        if self._is_expired(request, at):
            return self._expire(request, at, approver)
        route = self._routes[request.tool]
        result = _invoke(route.handler, request.arguments)
        result = _with_request_id(result, request_id)
        self._log(
            request.tool,
            "approved" if result.ok else "error",
            at,
            request_id=request_id,
            approver=approver,
            error=result.error,
        )
        return result

    def deny(self, request_id: str, approver: str | None = None, now_ms: int | None = None) -> CallResult:
        """Refuse a pending request, once; a spent or never-issued id is `unknown request: <id>`
        (never a success on garbage input) and logs nothing."""
        at = self._now(now_ms)
        request = self._take(request_id)
        if request is None:
            return _unknown_request(request_id)
        if self._is_expired(request, at):
            return self._expire(request, at, approver)
        self._log(
            request.tool,
            "denied",
            at,
            request_id=request_id,
            approver=approver,
            error=f"request denied: {request_id}",
        )
        return CallResult(ok=False, denied=True, request_id=request_id, error=f"request denied: {request_id}")

    def expire(self, now_ms: int | None = None) -> list[CallResult]:
        """Expire every pending request past its TTL (each logged `expired` once); the results
        in issue order. Without a TTL nothing expires."""
        at = self._now(now_ms)
        overdue = [request for request in self._pending.values() if self._is_expired(request, at)]
        results = []
        for request in overdue:
            del self._pending[request.request_id]
            results.append(self._expire(request, at, None))
        return results

    def pending(self) -> list[PendingRequest]:
        """The requests awaiting a decision, in issue order (a copy)."""
        return list(self._pending.values())

    def audit_log(self) -> list[AuditRow]:
        """A copy of the in-memory audit window: a caller editing it edits nothing here."""
        return self._audit.rows()

    @property
    def audit_total(self) -> int:
        """Rows ever logged (the window may hold fewer; the sink holds all)."""
        return self._audit.total

    def _take(self, request_id: object) -> PendingRequest | None:
        # Spent before anything runs: whatever happens next, this id cannot be used twice.
        if not isinstance(request_id, str):
            return None
        return self._pending.pop(request_id, None)

    def _is_expired(self, request: PendingRequest, at: int) -> bool:
        return self._ttl_ms is not None and at - request.issued_at_ms >= self._ttl_ms

    def _expire(self, request: PendingRequest, at: int, approver: str | None) -> CallResult:
        """Answer `expired` (not denied) for a request already taken from pending, so it is logged once."""
        error = f"request expired: {request.request_id}"
        self._log(request.tool, "expired", at, request_id=request.request_id, approver=approver, error=error)
        return CallResult(ok=False, expired=True, request_id=request.request_id, error=error)

    def _log(
        self,
        tool: str,
        outcome: AuditOutcome,
        at: int,
        *,
        request_id: str | None = None,
        approver: str | None = None,
        error: str | None = None,
    ) -> None:
        self._audit.append(
            tool=tool, outcome=outcome, at_ms=at, request_id=request_id, approver=approver, error=error
        )

    @staticmethod
    def _now(now_ms: int | None) -> int:
        """The caller's time when given; otherwise the one wall-clock read (`xpeval.evals.runtime.clock`)."""
        return wall_clock_ms() if now_ms is None else now_ms


def _invoke(handler: Handler, arguments: Any) -> CallResult:
    """Run a handler: any return value, falsy included, is a success; an exception becomes an
    error value (`str(exc)`, or its type name when that is empty)."""
    try:
        value = handler(arguments)
    except Exception as exc:
        return CallResult(ok=False, error=describe_exception(exc))
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it so Python does not warn at garbage collection
        return CallResult(
            ok=False, error="handler returned an awaitable; the router runs synchronous handlers"
        )
    return CallResult(ok=True, value=value)


def _with_request_id(result: CallResult, request_id: str) -> CallResult:
    return CallResult(ok=result.ok, value=result.value, error=result.error, request_id=request_id)


def _unknown_request(request_id: object) -> CallResult:
    return CallResult(ok=False, error=f"unknown request: {display_name(request_id)}")


def _echo_arguments(arguments: Any) -> Any:
    return arguments.model_dump(mode="json") if isinstance(arguments, BaseModel) else arguments
