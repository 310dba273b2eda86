"""Provider emulator: answers in each wire's exact format. HTTP, scripts and faults only:
the response bodies come from the wire modules (a wire knows its format both ways)."""

from xpeval.evals.emulator.script import Reply, ScriptedTransport
from xpeval.evals.emulator.server import EmulatorServer, EmulatorTransport, ReceivedRequest

__all__ = ["EmulatorServer", "EmulatorTransport", "ReceivedRequest", "Reply", "ScriptedTransport"]
