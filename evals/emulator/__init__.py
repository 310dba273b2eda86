"""Provider emulator: answers in each wire's exact format. HTTP, scripts and faults only:
the response bodies come from the wire modules (a wire knows its format both ways)."""

from evals.emulator.script import Reply, ScriptedTransport
from evals.emulator.server import EmulatorServer, EmulatorTransport, ReceivedRequest

__all__ = ["EmulatorServer", "EmulatorTransport", "ReceivedRequest", "Reply", "ScriptedTransport"]
