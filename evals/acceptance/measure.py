"""Schema acceptance, per (adapter, schema): what the adapter would send, whether the provider's
published rules accept it, and what the rewrite changed.

For each pair: the adapter's dialect pass (`prepare_tools`) rewrites the tool, its wire encodes
it, the acceptance checker judges the definition exactly as the wire would send it, and the
fidelity measurement compares the sent schema with the original on generated instances. This is
an offline measurement of the adapter's rewrite against the published rules, not a provider's
live answer.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from xpeval.adapters.contract import ToolSpec, TurnRequest, UserMessage
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.schema import PassResult, PreparedTool, prepare_tools
from xpeval.adapters.schema.refusals import NO_TOOL, PASS_ERROR, WIRE_ERROR, refusal_source
from xpeval.adapters.wires import get_wire
from xpeval.evals.acceptance.checker import Violation, check, definitions_in_request, mode_for, sent_schema
from xpeval.evals.acceptance.checker.walk import json_depth
from xpeval.evals.acceptance.fidelity import ArgumentMappings, InstanceCache, measure_fidelity
from xpeval.evals.acceptance.sources.tool_files import Form, FoundTool, read_tools, tool_at

Verdict = Literal["as-is", "rewritten", "refused"]

SERIALIZABLE_DEPTH = 200
"""Deeper values cannot be serialized (pydantic stops near 255 levels, `json.dumps` recurses):
such a definition is not echoed."""
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "maxProperties": 0}
"""What a function declared without parameters (Gemini omits the field) accepts."""


class PairResult(BaseModel):
    """One line of `xpeval schemas --json`."""

    model_config = ConfigDict(populate_by_name=True)

    adapter: str
    schema_: str = Field(alias="schema")
    """The row key: the tool file's path relative to the folder, without `.json`, and `#name`
    when the file holds several tools (`xpeval.evals.acceptance.sources.tool_files`); a server's tool:
    its name."""
    verdict: Verdict
    losses: list[dict[str, Any]] = Field(default_factory=list)
    violations: list[Violation] = Field(default_factory=list)
    loss_rate: float | None = None
    false_rejections: int = 0
    rewritten: dict[str, Any] | None = None
    """The tool definition exactly as the wire would send it; None when refused, too deep to
    echo, or not asked for (`measure_tools(definitions=False)`: a caller that keeps only the
    verdicts spares the worker processes sending every definition back)."""
    seconds: float = 0.0
    refusal: str | None = None
    """Why the adapter refuses to send the tool (verdict "refused")."""
    refusal_rule: str | None = None
    """The refusal rule it follows (`xpeval.adapters.schema.refusals.REFUSAL_RULES`)..."""
    refusal_source: str | None = None
    """... and where that rule comes from."""
    narrowed: int = 0
    """Generated calls refused only by a narrowing the adapter reported (see
    `xpeval.evals.acceptance.fidelity`)."""
    fidelity_note: str | None = None
    """Why the fidelity measurement is missing or partial."""
    tool: str | None = None
    """The tool's name as its source gives it."""
    source: str | None = None
    """The file or MCP server the tool was read from."""
    form: Form | None = None
    """The form the tool was written in (`xpeval.evals.acceptance.sources.tool_files.FORMS`)."""

    def line(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


@dataclass(frozen=True)
class CorpusSchema:
    """A tool to measure: its row key, the tool, and where it came from."""

    key: str
    tool: ToolSpec | None
    problem: str | None = None
    """Why there is no tool (a caller's own entry; the readers raise instead)."""
    source: str | None = None
    form: Form | None = None


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if json_depth(a, SERIALIZABLE_DEPTH) > SERIALIZABLE_DEPTH:
        # == recurses too, no deeper than the shallower side; a pass that rebuilt such a schema
        # changed it
        return False
    return bool(a == b)


def _mappings(tool: PreparedTool) -> ArgumentMappings | None:
    """The adapter's own argument mappings for this tool (strict modes), as fidelity needs them."""
    if tool.sent is None or (tool.arguments.empty and not tool.arguments.narrowed_types):
        return None
    sent = tool.sent.parameters
    complete = PassResult(schema=sent, arguments=tool.arguments.model_copy(update={"closed": ()}))
    narrowing = PassResult(schema=sent, arguments=tool.arguments)
    return ArgumentMappings(
        to_wire=complete.arguments_to_wire,
        narrowing_to_wire=narrowing.arguments_to_wire,
        from_wire=narrowing.restore_arguments,
        narrowed_types=frozenset(tool.arguments.narrowed_types),
    )


def measure_pair(
    adapter_id: str,
    entry: CorpusSchema,
    *,
    examples: int,
    seconds: float,
    cache: InstanceCache | None = None,
    fidelity: bool = True,
    definitions: bool = True,
) -> PairResult:
    """The acceptance and fidelity of one schema sent by one adapter (`fidelity=False`: acceptance
    only, `loss_rate` left None; `definitions=False`: `rewritten` left None). Never raises for a
    schema: a pass or wire that fails on it is recorded as a refusal with the reason."""
    started = time.perf_counter()

    def done(**fields: Any) -> PairResult:
        if fields.get("refusal_rule"):
            fields["refusal_source"] = refusal_source(fields["refusal_rule"])
        return PairResult(
            adapter=adapter_id,
            schema=entry.key,
            seconds=round(time.perf_counter() - started, 4),
            tool=entry.tool.name if entry.tool else None,
            source=entry.source,
            form=entry.form,
            **fields,
        )

    if entry.tool is None:
        return done(verdict="refused", refusal=entry.problem, refusal_rule=NO_TOOL.id)
    tool = entry.tool
    contract = effective_contract(adapter_id)
    try:
        prepared = prepare_tools(contract.schema_dialect, [tool])
    except Exception as exc:  # a pass bug on one schema must not end the run
        return done(
            verdict="refused",
            refusal=f"the {contract.schema_dialect} pass raised {type(exc).__name__}: {exc}",
            refusal_rule=PASS_ERROR.id,
        )
    one = prepared.tools[0]
    losses = [loss.model_dump() for loss in one.losses]
    if one.sent is None:
        return done(
            verdict="refused", refusal=one.refusal or "refused", refusal_rule=one.refusal_rule, losses=losses
        )
    try:
        request = TurnRequest(model="schema-acceptance", messages=[UserMessage(content="-")], tools=[tool])
        sent = definitions_in_request(contract.wire, get_wire(contract.wire).encode(request, prepared))
        definition = sent[0]
    except Exception as exc:
        return done(
            verdict="refused",
            losses=losses,
            refusal=f"the {contract.wire} wire could not encode the tool: {type(exc).__name__}: {exc}",
            refusal_rule=WIRE_ERROR.id,
        )
    mode = mode_for(contract.wire, contract.schema_dialect, prepared.strict)
    violations = check(mode, definition)
    unchanged = one.sent.name == tool.name and one.sent.description == tool.description
    unchanged = unchanged and _same(one.sent.parameters, tool.parameters)
    echoable = definitions and json_depth(definition, SERIALIZABLE_DEPTH) <= SERIALIZABLE_DEPTH
    echoed = definition if echoable else None
    semantics = get_wire(contract.wire).tool_layout(contract.schema_dialect, prepared.strict).semantics
    if unchanged and semantics == "json-schema":
        return done(verdict="as-is", losses=losses, violations=violations, loss_rate=0.0, rewritten=echoed)
    if not fidelity:
        return done(
            verdict="as-is" if unchanged else "rewritten",
            losses=losses,
            violations=violations,
            rewritten=echoed,
        )
    sent_parameters = sent_schema(mode, definition)
    measured = measure_fidelity(
        tool.parameters,
        NO_ARGUMENTS if sent_parameters is None else sent_parameters,
        semantics=semantics,
        mappings=_mappings(one),
        examples=examples,
        seconds=seconds,
        draw=(cache or InstanceCache()).draw,
    )
    return done(
        verdict="as-is" if unchanged else "rewritten",
        losses=losses,
        violations=violations,
        loss_rate=measured.loss_rate,
        false_rejections=measured.false_rejections,
        narrowed=measured.narrowed,
        rewritten=echoed,
        fidelity_note=measured.reason
        if json_depth(definition, SERIALIZABLE_DEPTH) <= SERIALIZABLE_DEPTH
        else "; ".join(filter(None, [measured.reason, "definition too deep to echo"])),
    )


@dataclass(frozen=True)
class _Task:
    key: str
    source: str
    form: Form
    path: Path | None
    index: int
    spec: ToolSpec | None
    """Inline only for a tool that has no file (an MCP server's): a deep schema cannot be
    pickled, so a file's tool is read again in the worker (`tool_at`)."""
    adapters: tuple[str, ...]
    examples: int
    seconds: float
    fidelity: bool
    definitions: bool


def _measure_schema(task: _Task) -> list[PairResult]:
    """Every adapter for one tool (one generation cache: adapters sending the same schema, and
    every adapter's original, share their instances). A pair's measurement depends on the
    adapter only through its wire and dialect (`measure_pair`): adapters that share both (the
    OpenAI-compatible ones, the three strict Responses adapters) share one measurement (and
    its `seconds`)."""
    spec = task.spec if task.path is None else tool_at(task.path, task.index)
    entry = CorpusSchema(task.key, spec, source=task.source, form=task.form)
    cache = InstanceCache()
    measured: dict[tuple[str, str], PairResult] = {}
    rows = []
    for adapter_id in task.adapters:
        contract = effective_contract(adapter_id)
        same = measured.get((contract.wire, contract.schema_dialect))
        if same is not None:
            rows.append(same.model_copy(update={"adapter": adapter_id}))
            continue
        row = measure_pair(
            adapter_id,
            entry,
            examples=task.examples,
            seconds=task.seconds,
            cache=cache,
            fidelity=task.fidelity,
            definitions=task.definitions,
        )
        measured[(contract.wire, contract.schema_dialect)] = row
        rows.append(row)
    return rows


def measure_corpus(
    folder: Path,
    adapters: Sequence[str],
    *,
    examples: int,
    seconds: float,
    fidelity: bool = True,
    workers: int = 1,
    on_schema: Callable[[int, int], None] | None = None,
) -> Iterator[PairResult]:
    """Every adapter x every tool of the files under `folder`, tool by tool in file order.
    Raises `xpeval.evals.acceptance.sources.tool_files.ToolsInputError` (before measuring anything) when
    a file cannot
    be read."""
    tools = read_tools([folder]).tools
    return measure_tools(
        tools,
        adapters,
        examples=examples,
        seconds=seconds,
        fidelity=fidelity,
        workers=workers,
        on_schema=on_schema,
    )


def measure_tools(
    tools: Sequence[FoundTool],
    adapters: Sequence[str],
    *,
    examples: int,
    seconds: float,
    fidelity: bool = True,
    workers: int = 1,
    on_schema: Callable[[int, int], None] | None = None,
    definitions: bool = True,
) -> Iterator[PairResult]:
    """Every adapter x every tool, tool by tool in the order given (`definitions=False`: without
    the sent definitions, `PairResult.rewritten`).

    With `workers > 1` tools are measured in parallel processes; each worker reads a file's tool
    itself (a deep schema cannot be pickled: pickle recurses too).
    """
    tasks = [
        _Task(
            tool.key,
            tool.source,
            tool.form,
            tool.path,
            tool.index,
            tool.spec if tool.path is None else None,
            tuple(adapters),
            examples,
            seconds,
            fidelity,
            definitions,
        )
        for tool in tools
    ]
    return _measured(tasks, workers, on_schema)


def _measured(
    tasks: list[_Task], workers: int, on_schema: Callable[[int, int], None] | None
) -> Iterator[PairResult]:
    if workers <= 1 or len(tasks) <= 1:
        results: Iterator[list[PairResult]] = map(_measure_schema, tasks)
        for index, rows in enumerate(results, 1):
            yield from rows
            if on_schema:
                on_schema(index, len(tasks))
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
        # tools go out in batches: one message per tool would cost the parent more than reading
        # the rows back (10,000 tools: benchmarks/schemas_at_scale.py)
        chunk = max(1, min(TASK_BATCH, len(tasks) // (4 * workers)))
        for index, rows in enumerate(pool.map(_measure_schema, tasks, chunksize=chunk), 1):
            yield from rows
            if on_schema:
                on_schema(index, len(tasks))


TASK_BATCH = 16
"""Tools sent to a worker process at a time (fewer when there are few tools, so that every
worker gets some)."""


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))
