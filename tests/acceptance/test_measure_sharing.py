"""What `measure_tools` shares between pairs and leaves out to scale (10,000 tools:
benchmarks/schemas_at_scale.py) changes no row."""

from __future__ import annotations

from typing import Any

from xpeval.adapters.registry import adapter_ids, effective_contract
from xpeval.evals.acceptance.measure import CorpusSchema, PairResult, measure_pair, measure_tools
from xpeval.evals.acceptance.sources.tool_files import BUILTIN_CORPUS, read_tools


def _row(pair: PairResult, *drop: str) -> dict[str, Any]:
    line = pair.line()
    for field in ("seconds", *drop):
        line.pop(field)
    return line


def test_adapters_sharing_a_wire_and_a_dialect_get_the_rows_each_would_get_alone() -> None:
    adapters = adapter_ids()
    shared = {(effective_contract(a).wire, effective_contract(a).schema_dialect) for a in adapters}
    assert len(shared) < len(adapters)  # some adapters do share one measurement
    tools = read_tools([BUILTIN_CORPUS]).tools
    rows = list(measure_tools(tools, adapters, examples=1, seconds=1.0, fidelity=False))
    alone = [
        measure_pair(
            adapter,
            CorpusSchema(tool.key, tool.spec, source=tool.source, form=tool.form),
            examples=1,
            seconds=1.0,
            fidelity=False,
        )
        for tool in tools
        for adapter in adapters
    ]
    assert [_row(row) for row in rows] == [_row(row) for row in alone]


def test_without_definitions_the_rows_are_the_same_but_for_the_definition() -> None:
    tools = read_tools([BUILTIN_CORPUS]).tools
    adapters = ["openai-responses", "anthropic-messages", "google-genai"]
    kept = list(measure_tools(tools, adapters, examples=1, seconds=1.0, fidelity=False, workers=2))
    left = list(
        measure_tools(tools, adapters, examples=1, seconds=1.0, fidelity=False, workers=2, definitions=False)
    )
    assert any(row.rewritten for row in kept) and not any(row.rewritten for row in left)
    assert [_row(row, "rewritten") for row in kept] == [_row(row, "rewritten") for row in left]
