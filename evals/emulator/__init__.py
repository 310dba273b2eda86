"""Provider emulator: answers in each wire's exact format. HTTP, scripts and faults only:
the response bodies come from the wire modules (a wire knows its format both ways)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "EmulatorServer": "xpeval.evals.emulator.server",
    "EmulatorTransport": "xpeval.evals.emulator.server",
    "ReceivedRequest": "xpeval.evals.emulator.server",
    "Reply": "xpeval.evals.emulator.script",
    "ScriptedTransport": "xpeval.evals.emulator.script",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.emulator.script import Reply as Reply
    from xpeval.evals.emulator.script import ScriptedTransport as ScriptedTransport
    from xpeval.evals.emulator.server import EmulatorServer as EmulatorServer
    from xpeval.evals.emulator.server import EmulatorTransport as EmulatorTransport
    from xpeval.evals.emulator.server import ReceivedRequest as ReceivedRequest
