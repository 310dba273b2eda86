"""The tool runtime: tool registry, tool router (per-action approval, audit), agent loop."""

from xpeval.evals.runtime.arguments import CheckedArguments, check_arguments
from xpeval.evals.runtime.audit import AuditLog, AuditOutcome, AuditRow, AuditSinkError, read_audit_jsonl
from xpeval.evals.runtime.clock import now_ms
from xpeval.evals.runtime.loop import (
    AgentLoop,
    AgentState,
    AgentStatus,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    TurnTaker,
    approve_all,
    deny_all,
)
from xpeval.evals.runtime.router import CallResult, PendingRequest, ToolRouter
from xpeval.evals.runtime.tool_errors import ToolNotFoundError, ToolRegistryError, ToolRouterError
from xpeval.evals.runtime.tool_registry import Resolution, Risk, ToolDefinition, ToolRegistry

__all__ = [
    "AgentLoop",
    "AgentState",
    "AgentStatus",
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalRequest",
    "AuditLog",
    "AuditOutcome",
    "AuditRow",
    "AuditSinkError",
    "CallResult",
    "CheckedArguments",
    "PendingRequest",
    "Resolution",
    "Risk",
    "ToolDefinition",
    "ToolNotFoundError",
    "ToolRegistry",
    "ToolRegistryError",
    "ToolRouter",
    "ToolRouterError",
    "TurnTaker",
    "approve_all",
    "check_arguments",
    "deny_all",
    "now_ms",
    "read_audit_jsonl",
]
