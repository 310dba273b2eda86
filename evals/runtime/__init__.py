"""The tool runtime: tool registry, tool router (per-action approval, audit), agent loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "AgentLoop": "xpeval.evals.runtime.loop",
    "AgentState": "xpeval.evals.runtime.loop",
    "AgentStatus": "xpeval.evals.runtime.loop",
    "ApprovalDecision": "xpeval.evals.runtime.loop",
    "ApprovalPolicy": "xpeval.evals.runtime.loop",
    "ApprovalRequest": "xpeval.evals.runtime.loop",
    "AuditLog": "xpeval.evals.runtime.audit",
    "AuditOutcome": "xpeval.evals.runtime.audit",
    "AuditRow": "xpeval.evals.runtime.audit",
    "AuditSinkError": "xpeval.evals.runtime.audit",
    "CallResult": "xpeval.evals.runtime.router",
    "CheckedArguments": "xpeval.evals.runtime.arguments",
    "PendingRequest": "xpeval.evals.runtime.router",
    "Resolution": "xpeval.evals.runtime.tool_registry",
    "Risk": "xpeval.evals.runtime.tool_registry",
    "ToolDefinition": "xpeval.evals.runtime.tool_registry",
    "ToolNotFoundError": "xpeval.evals.runtime.tool_errors",
    "ToolRegistry": "xpeval.evals.runtime.tool_registry",
    "ToolRegistryError": "xpeval.evals.runtime.tool_errors",
    "ToolRouter": "xpeval.evals.runtime.router",
    "ToolRouterError": "xpeval.evals.runtime.tool_errors",
    "TurnTaker": "xpeval.evals.runtime.loop",
    "approve_all": "xpeval.evals.runtime.loop",
    "check_arguments": "xpeval.evals.runtime.arguments",
    "deny_all": "xpeval.evals.runtime.loop",
    "now_ms": "xpeval.evals.runtime.clock",
    "read_audit_jsonl": "xpeval.evals.runtime.audit",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.runtime.arguments import CheckedArguments as CheckedArguments
    from xpeval.evals.runtime.arguments import check_arguments as check_arguments
    from xpeval.evals.runtime.audit import AuditLog as AuditLog
    from xpeval.evals.runtime.audit import AuditOutcome as AuditOutcome
    from xpeval.evals.runtime.audit import AuditRow as AuditRow
    from xpeval.evals.runtime.audit import AuditSinkError as AuditSinkError
    from xpeval.evals.runtime.audit import read_audit_jsonl as read_audit_jsonl
    from xpeval.evals.runtime.clock import now_ms as now_ms
    from xpeval.evals.runtime.loop import AgentLoop as AgentLoop
    from xpeval.evals.runtime.loop import AgentState as AgentState
    from xpeval.evals.runtime.loop import AgentStatus as AgentStatus
    from xpeval.evals.runtime.loop import ApprovalDecision as ApprovalDecision
    from xpeval.evals.runtime.loop import ApprovalPolicy as ApprovalPolicy
    from xpeval.evals.runtime.loop import ApprovalRequest as ApprovalRequest
    from xpeval.evals.runtime.loop import TurnTaker as TurnTaker
    from xpeval.evals.runtime.loop import approve_all as approve_all
    from xpeval.evals.runtime.loop import deny_all as deny_all
    from xpeval.evals.runtime.router import CallResult as CallResult
    from xpeval.evals.runtime.router import PendingRequest as PendingRequest
    from xpeval.evals.runtime.router import ToolRouter as ToolRouter
    from xpeval.evals.runtime.tool_errors import ToolNotFoundError as ToolNotFoundError
    from xpeval.evals.runtime.tool_errors import ToolRegistryError as ToolRegistryError
    from xpeval.evals.runtime.tool_errors import ToolRouterError as ToolRouterError
    from xpeval.evals.runtime.tool_registry import Resolution as Resolution
    from xpeval.evals.runtime.tool_registry import Risk as Risk
    from xpeval.evals.runtime.tool_registry import ToolDefinition as ToolDefinition
    from xpeval.evals.runtime.tool_registry import ToolRegistry as ToolRegistry
