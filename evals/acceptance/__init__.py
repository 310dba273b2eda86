"""Schema acceptance: what each adapter would send for a tool's JSON Schema, whether the
providers' published rules accept it, and what the rewrite lost.

- `tools`: tool files in the common forms (xpeval's own, OpenAI Chat and Responses, Anthropic,
  MCP `tools/list`), read into rows; unreadable input is an input error, never a verdict;
- `mcp`: a live MCP server's tools, through the official `mcp` SDK (stdio or streamable HTTP);
- `measure`: one (adapter, tool) pair, or every pair, in parallel processes;
- `fidelity`: how much a rewrite changed the contract, on hypothesis-jsonschema instances;
- `scorecard`: the pandas tables and reports/schema_acceptance.{csv,md};
- `cache`: the default report, measured again only when what it measures changed.

The names below are the package's surface; the scorecard and the cache (pandas, the registry)
are imported from their modules.
"""

from __future__ import annotations

from xpeval.evals.acceptance.fidelity import FidelityResult, measure_fidelity
from xpeval.evals.acceptance.measure import (
    CorpusSchema,
    PairResult,
    measure_corpus,
    measure_pair,
    measure_tools,
)
from xpeval.evals.acceptance.sources.mcp_server import read_mcp_tools
from xpeval.evals.acceptance.sources.tool_files import FORMS, FoundTool, ToolsInputError, read_tools

__all__ = [
    "FORMS",
    "CorpusSchema",
    "FidelityResult",
    "FoundTool",
    "PairResult",
    "ToolsInputError",
    "measure_corpus",
    "measure_fidelity",
    "measure_pair",
    "measure_tools",
    "read_mcp_tools",
    "read_tools",
]
