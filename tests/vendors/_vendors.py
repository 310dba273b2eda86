"""Vendors whose answers a test writes, played through the real runner into a results file.

A vendor is a function from a case to the `TurnResult` it answers with; `run_vendors` plays
every case through every vendor (one adapter id each) and returns the complete results file,
as `xpeval run` would have written it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xpeval.adapters.contract import ToolCall, TurnRequest, TurnResult, Usage
from xpeval.evals.cases import Case
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import RunHeader
from xpeval.evals.results.run_plan import CASE_DIGESTS, RunPlan, case_digests
from xpeval.evals.running.plan import PlannedEpisode
from xpeval.evals.running.runner import OpenEpisode, Runner, RunSettings

Vendor = Callable[[Case], TurnResult]


@dataclass
class _Answering:
    vendor: Vendor
    case: Case

    async def turn(self, request: TurnRequest) -> TurnResult:
        return self.vendor(self.case)


@dataclass
class _Backend:
    vendors: Mapping[str, Vendor]
    model: str

    def open(self, planned: PlannedEpisode) -> OpenEpisode:
        return OpenEpisode(
            adapter=_Answering(self.vendors[planned.adapter_id], planned.case),
            adapter_id=planned.adapter_id,
            wire="openai-chat",
            model=planned.model or self.model,
            source="local-model",
        )


def run_vendors(
    path: Path,
    cases: Sequence[Case],
    vendors: Mapping[str, Vendor],
    *,
    model: str = "qwen2.5-coder-1.5b-instruct",
    case_set: str = "builtin",
    run: str = "run-vendors",
) -> Path:
    """A complete results file of every case through every vendor (adapter id -> vendor)."""
    header = RunHeader(
        run=run,
        fingerprint="0" * 16,
        started_at="2026-12-01T00:00:00+00:00",
        config={
            "case_set": case_set,
            "adapters": list(vendors),
            "some_cases": False,
            CASE_DIGESTS: case_digests(cases),
        },
        plan=RunPlan(cases=[c.id for c in cases], models={a: [model] for a in vendors}),
    )
    results = ResultsFile.open_for(path, header)
    runner = Runner(_Backend(vendors, model), results, RunSettings(concurrency=2, max_attempts=1))
    asyncio.run(runner.run([PlannedEpisode(c, a, model) for c in cases for a in vendors]))
    results.finish()
    results.close()
    return path


def perfect(case: Case) -> TurnResult:
    """The expected calls of a labelled case (none for an irrelevance case)."""
    if case.expected is None or case.expected.no_call:
        return TurnResult(text="No tool applies.", usage=Usage(input_tokens=10, output_tokens=3))
    calls = [
        ToolCall(id=f"call_{i}", name=c.name, arguments=c.canonical_arguments())
        for i, c in enumerate(case.expected.calls)
    ]
    return TurnResult(
        tool_calls=calls, finish_reason="tool_calls", usage=Usage(input_tokens=10, output_tokens=5)
    )


def dropping_calls(case: Case) -> TurnResult:
    """A vendor whose serving stack loses the model's tool calls: text where calls should be."""
    answer = perfect(case)
    if answer.tool_calls:
        return TurnResult(text='<tool_call>{"name": ...}</tool_call>', finish_reason="stop")
    return answer
