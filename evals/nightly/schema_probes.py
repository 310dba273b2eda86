"""Live schema acceptance: each corpus tool sent once to each live adapter in the smallest
request that carries it; the provider's answer next to the offline checker's prediction."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx2
import pandas as pd

from xpeval.adapters.contract import ProviderError, TurnRequest, UserMessage, WireName
from xpeval.adapters.registry import effective_contract
from xpeval.evals.acceptance.measure import CorpusSchema, PairResult, measure_pair
from xpeval.evals.acceptance.sources.tool_files import FoundTool
from xpeval.evals.nightly.plan import AdapterTarget
from xpeval.evals.running.retry import backoff_delay
from xpeval.evals.running.suite import SuiteConfig
from xpeval.evals.scrub import scrub_line

PROBE_PROMPT = "Reply with the word OK."
MIN_OUTPUT_TOKENS: Mapping[WireName, int] = {"openai-responses": 16}
"""The smallest output budget each wire's API takes (the Responses API refuses
`max_output_tokens` below 16 with a 400, which would read as a refused tool; the other wires
take 1). A probe asks whether the tool is accepted, not for an answer."""
REFUSAL_STATUSES = frozenset({400, 422})
"""The statuses a provider refuses a request's content with (a tool it will not take)."""
MESSAGE_CHARS = 2000

Answer = Literal["accepted", "refused", "error", "not-sent"]
Prediction = Literal["accepted", "refused", "not-sent"]


@dataclass(frozen=True)
class SchemaProbe:
    """One corpus tool sent once to one live adapter: the checker's prediction and the answer."""

    adapter: str
    model: str
    schema: str
    tool: str
    predicted: Prediction
    rules: tuple[str, ...] = ()
    """The checker's rules the sent definition breaks (why it predicts a refusal)."""
    answer: Answer = "not-sent"
    status: int | None = None
    message: str | None = None
    """The provider's error text when it did not accept, or why nothing was sent."""

    @property
    def agrees(self) -> bool | None:
        """Whether the provider answered as the checker predicts (None: nothing to compare)."""
        if self.predicted == "not-sent" or self.answer not in ("accepted", "refused"):
            return None
        return self.predicted == self.answer

    def row(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "model": self.model,
            "schema": self.schema,
            "tool": self.tool,
            "predicted": self.predicted,
            "rules": ",".join(self.rules),
            "answer": self.answer,
            "status": self.status,
            "message": self.message,
            "agrees": self.agrees,
        }


def predict(adapter_id: str, tool: FoundTool) -> tuple[Prediction, tuple[str, ...], PairResult]:
    """The offline checker's prediction for one pair (`xpeval.evals.acceptance.measure.measure_pair`):
    `not-sent` when the adapter itself refuses the tool, `refused` when the definition it would
    send breaks a provider rule, else `accepted`."""
    pair = measure_pair(
        adapter_id,
        CorpusSchema(tool.key, tool.spec, source=tool.source, form=tool.form),
        examples=0,
        seconds=0.0,
        fidelity=False,
    )
    if pair.verdict == "refused":
        return "not-sent", (), pair
    rules = tuple(dict.fromkeys(v.rule for v in pair.violations))
    return ("refused" if rules else "accepted"), rules, pair


ProbeUpstream = Callable[[str, str], httpx2.AsyncBaseTransport]
"""(adapter id, schema key) -> the transport one probe goes through (tests: the emulator)."""


def _scrubbed(text: str | None) -> str | None:
    if text is None:
        return None
    return scrub_line(text)[:MESSAGE_CHARS]


def _answer_of(error: ProviderError | None, status: int | None) -> tuple[Answer, int | None, str | None]:
    if error is None:
        return "accepted", status or 200, None
    if error.kind == "refused":
        return "not-sent", None, _scrubbed(error.message)
    if error.kind == "http" and error.status in REFUSAL_STATUSES:
        return "refused", error.status, _scrubbed(error.message)
    return "error", error.status, _scrubbed(f"{error.kind}: {error.message}")


async def _probe_adapter(
    adapter_id: str,
    model: str,
    tools: Sequence[FoundTool],
    run: SuiteConfig,
    upstream: ProbeUpstream | None,
) -> list[SchemaProbe]:
    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter
    from xpeval.evals.running.episode_transport import EpisodeRouter, bound, upstream_pool

    router = EpisodeRouter(upstream_pool())
    adapter = create_adapter(adapter_id, AdapterSettings(model=model, transport=router, timeout=run.timeout))
    wire = effective_contract(adapter_id).wire
    gate = asyncio.Semaphore(run.concurrency)
    limiter = None
    if run.rate is not None:
        from aiolimiter import AsyncLimiter

        limiter = AsyncLimiter(run.rate, 1)

    async def probe(tool: FoundTool) -> SchemaProbe:
        predicted, rules, pair = predict(adapter_id, tool)
        base = SchemaProbe(adapter_id, model, tool.key, tool.spec.name, predicted, rules)
        if predicted == "not-sent":
            return _with(base, "not-sent", None, pair.refusal)
        request = TurnRequest(
            model=model,
            messages=[UserMessage(content=PROBE_PROMPT)],
            tools=[tool.spec],
            tool_choice="auto",
            max_output_tokens=MIN_OUTPUT_TOKENS.get(wire, 1),
        )
        async with gate:
            for attempt in range(run.retries + 1):
                if limiter is not None:
                    await limiter.acquire()
                with bound(upstream(adapter_id, tool.key) if upstream is not None else None):
                    try:
                        result = await asyncio.wait_for(adapter.turn(request), run.timeout * 2)
                        error, status = result.error, result.status
                    except TimeoutError:
                        return _with(base, "error", None, f"no answer within {run.timeout * 2:g} s")
                    except Exception as exc:  # an encoder that cannot take the tool: nothing was sent
                        return _with(base, "not-sent", None, f"{type(exc).__name__}: {exc}")
                if error is None or not error.retryable or attempt == run.retries:
                    return _with(base, *_answer_of(error, status))
                # The runner's backoff: full jitter, and a provider's Retry-After (0 included) wins.
                await asyncio.sleep(backoff_delay(attempt + 1, error, cap=30.0))
        raise AssertionError("unreachable")

    try:
        return list(await asyncio.gather(*(probe(tool) for tool in tools)))
    finally:
        await adapter.aclose()
        await router.aclose()


def _with(probe: SchemaProbe, answer: Answer, status: int | None, message: str | None) -> SchemaProbe:
    return SchemaProbe(
        probe.adapter,
        probe.model,
        probe.schema,
        probe.tool,
        probe.predicted,
        probe.rules,
        answer,
        status,
        message,
    )


def probe_schemas(
    targets: Sequence[AdapterTarget],
    tools: Sequence[FoundTool],
    run: SuiteConfig,
    *,
    upstream: ProbeUpstream | None = None,
) -> list[SchemaProbe]:
    """Every tool sent once to every adapter with a live provider (its first nightly model)."""
    live = [t for t in targets if t.kind == "provider"]

    async def every() -> list[SchemaProbe]:
        found = await asyncio.gather(
            *(_probe_adapter(t.adapter, t.models[0], tools, run, upstream) for t in live)
        )
        return [probe for probes in found for probe in probes]

    return asyncio.run(every()) if live and tools else []


def probes_frame(probes: Sequence[SchemaProbe]) -> pd.DataFrame:
    columns = [
        "adapter",
        "model",
        "schema",
        "tool",
        "predicted",
        "rules",
        "answer",
        "status",
        "message",
        "agrees",
    ]
    frame = pd.DataFrame([p.row() for p in probes], columns=columns)
    frame["status"] = frame["status"].astype("Int64")
    return frame
