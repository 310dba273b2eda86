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

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "FORMS": "xpeval.evals.acceptance.sources.tool_files",
    "CorpusSchema": "xpeval.evals.acceptance.measure",
    "FidelityResult": "xpeval.evals.acceptance.fidelity",
    "FoundTool": "xpeval.evals.acceptance.sources.tool_files",
    "PairResult": "xpeval.evals.acceptance.measure",
    "ToolsInputError": "xpeval.evals.acceptance.sources.tool_files",
    "measure_corpus": "xpeval.evals.acceptance.measure",
    "measure_fidelity": "xpeval.evals.acceptance.fidelity",
    "measure_pair": "xpeval.evals.acceptance.measure",
    "measure_tools": "xpeval.evals.acceptance.measure",
    "read_mcp_tools": "xpeval.evals.acceptance.sources.mcp_server",
    "read_tools": "xpeval.evals.acceptance.sources.tool_files",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.acceptance.fidelity import FidelityResult as FidelityResult
    from xpeval.evals.acceptance.fidelity import measure_fidelity as measure_fidelity
    from xpeval.evals.acceptance.measure import CorpusSchema as CorpusSchema
    from xpeval.evals.acceptance.measure import PairResult as PairResult
    from xpeval.evals.acceptance.measure import measure_corpus as measure_corpus
    from xpeval.evals.acceptance.measure import measure_pair as measure_pair
    from xpeval.evals.acceptance.measure import measure_tools as measure_tools
    from xpeval.evals.acceptance.sources.mcp_server import read_mcp_tools as read_mcp_tools
    from xpeval.evals.acceptance.sources.tool_files import FORMS as FORMS
    from xpeval.evals.acceptance.sources.tool_files import FoundTool as FoundTool
    from xpeval.evals.acceptance.sources.tool_files import ToolsInputError as ToolsInputError
    from xpeval.evals.acceptance.sources.tool_files import read_tools as read_tools
