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

from adapters.contract import ToolSpec, TurnRequest, UserMessage
from adapters.registry import effective_contract
from adapters.schema import PassResult, PreparedTool, prepare_tools
from adapters.schema.safe_json import load_path
from adapters.wires import get_wire
from evals.acceptance import Violation, check, definitions_in_request, mode_for, sent_schema
from evals.acceptance.walk import json_depth
from evals.fidelity import ArgumentMappings, InstanceCache, measure_fidelity

Verdict = Literal["as-is", "rewritten", "refused"]

MAX_FILE_BYTES = 5_000_000
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
    """The schema file's path relative to the corpus folder, without `.json`."""
    verdict: Verdict
    losses: list[dict[str, Any]] = Field(default_factory=list)
    violations: list[Violation] = Field(default_factory=list)
    loss_rate: float | None = None
    false_rejections: int = 0
    rewritten: dict[str, Any] | None = None
    """The tool definition exactly as the wire would send it; None when refused."""
    seconds: float = 0.0
    refusal: str | None = None
    """Why the adapter refuses to send the tool (verdict "refused")."""
    narrowed: int = 0
    """Generated calls refused only by a narrowing the adapter reported (see `evals.fidelity`)."""
    fidelity_note: str | None = None
    """Why the fidelity measurement is missing or partial."""

    def line(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


@dataclass(frozen=True)
class CorpusSchema:
    """A schema file of the corpus, read (or the reason it cannot be)."""

    key: str
    tool: ToolSpec | None
    problem: str | None = None


def corpus_files(folder: Path) -> list[Path]:
    """Every schema file under `folder` (recursive `*.json`, MANIFEST/README excluded)."""
    return sorted(
        path
        for path in folder.rglob("*.json")
        if path.is_file() and not path.stem.upper().startswith(("MANIFEST", "README"))
    )


def read_schema(folder: Path, path: Path) -> CorpusSchema:
    """One corpus file as a tool; a file that is not a tool definition comes back with the
    reason instead of raising."""
    key = path.relative_to(folder).with_suffix("").as_posix()
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return CorpusSchema(key, None, f"file larger than {MAX_FILE_BYTES} bytes")
        data = load_path(path)  # iterative for deep documents: json.loads would recurse
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return CorpusSchema(key, None, f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        return CorpusSchema(key, None, "not a tool definition: the file is not a JSON object")
    name, parameters = data.get("name"), data.get("parameters")
    description = data.get("description", "")
    if not isinstance(name, str) or not isinstance(parameters, dict) or not isinstance(description, str):
        return CorpusSchema(
            key, None, 'not a tool definition: needs "name" (string) and "parameters" (object)'
        )
    return CorpusSchema(key, ToolSpec(name=name, description=description, parameters=parameters))


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if (
        json_depth(a, SERIALIZABLE_DEPTH) > SERIALIZABLE_DEPTH
        or json_depth(b, SERIALIZABLE_DEPTH) > SERIALIZABLE_DEPTH
    ):
        return False  # == recurses too; a pass that rebuilt such a schema changed it
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
) -> PairResult:
    """The acceptance and fidelity of one schema sent by one adapter (`fidelity=False`: acceptance
    only, `loss_rate` left None). Never raises for a schema: a pass or wire that fails on it is
    recorded as a refusal with the reason."""
    started = time.perf_counter()

    def done(**fields: Any) -> PairResult:
        return PairResult(
            adapter=adapter_id, schema=entry.key, seconds=round(time.perf_counter() - started, 4), **fields
        )

    if entry.tool is None:
        return done(verdict="refused", refusal=entry.problem)
    tool = entry.tool
    contract = effective_contract(adapter_id)
    try:
        prepared = prepare_tools(contract.schema_dialect, [tool])
    except Exception as exc:  # a pass bug on one schema must not end the run
        return done(
            verdict="refused",
            refusal=f"the {contract.schema_dialect} pass raised {type(exc).__name__}: {exc}",
        )
    one = prepared.tools[0]
    losses = [loss.model_dump() for loss in one.losses]
    if one.sent is None:
        return done(verdict="refused", refusal=one.refusal or "refused", losses=losses)
    try:
        request = TurnRequest(model="schema-acceptance", messages=[UserMessage(content="-")], tools=[tool])
        sent = definitions_in_request(contract.wire, get_wire(contract.wire).encode(request, prepared))
        definition = sent[0]
    except Exception as exc:
        return done(
            verdict="refused",
            losses=losses,
            refusal=f"the {contract.wire} wire could not encode the tool: {type(exc).__name__}: {exc}",
        )
    mode = mode_for(contract.wire, contract.schema_dialect, prepared.strict)
    violations = check(mode, definition)
    unchanged = one.sent.name == tool.name and one.sent.description == tool.description
    unchanged = unchanged and _same(one.sent.parameters, tool.parameters)
    echoed = definition if json_depth(definition, SERIALIZABLE_DEPTH) <= SERIALIZABLE_DEPTH else None
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
        if echoed is not None
        else "; ".join(filter(None, [measured.reason, "definition too deep to echo"])),
    )


@dataclass(frozen=True)
class _Task:
    folder: Path
    path: Path
    adapters: tuple[str, ...]
    examples: int
    seconds: float
    fidelity: bool


def _measure_schema(task: _Task) -> list[PairResult]:
    """Every adapter for one schema file (one generation cache: adapters sending the same schema,
    and every adapter's original, share their instances)."""
    entry = read_schema(task.folder, task.path)
    cache = InstanceCache()
    return [
        measure_pair(
            adapter_id,
            entry,
            examples=task.examples,
            seconds=task.seconds,
            cache=cache,
            fidelity=task.fidelity,
        )
        for adapter_id in task.adapters
    ]


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
    """Every adapter x every schema file under `folder`, schema by schema in file order.

    With `workers > 1` schemas are measured in parallel processes; each worker reads its file
    itself (a deep schema cannot be pickled: pickle recurses too).
    """
    paths = corpus_files(folder)
    tasks = [_Task(folder, path, tuple(adapters), examples, seconds, fidelity) for path in paths]
    if workers <= 1 or len(tasks) <= 1:
        results: Iterator[list[PairResult]] = map(_measure_schema, tasks)
        for index, rows in enumerate(results, 1):
            yield from rows
            if on_schema:
                on_schema(index, len(tasks))
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
        for index, rows in enumerate(pool.map(_measure_schema, tasks), 1):
            yield from rows
            if on_schema:
                on_schema(index, len(tasks))


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))
