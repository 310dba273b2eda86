"""An adapter: one configured provider endpoint behind the canonical contract.

An adapter = a wire (the format), an SDK client (base URL, auth, api-version: what a provider
module decides) and a schema dialect. `turn()` never raises for anything the provider or the
model does: failures come back as `TurnResult.error`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from xpeval.adapters.contract import (
    ForceTool,
    JsonObject,
    ProviderError,
    ToolChoice,
    ToolSpec,
    TurnRequest,
    TurnResult,
    WireName,
)
from xpeval.adapters.exchange import observe
from xpeval.adapters.off_loop import PluginBlocked, off_loop
from xpeval.adapters.schema import Dialect, PreparedTools, prepare_tools
from xpeval.adapters.wires import Wire, get_wire
from xpeval.adapters.wires.catalog import is_builtin_wire
from xpeval.adapters.wires.loop_rules import rules_of

if TYPE_CHECKING:
    from xpeval.adapters.providers._spec import Provider


ToolChoiceMode = Literal["auto", "none", "required", "named"]
TOOL_CHOICE_MODES: tuple[ToolChoiceMode, ...] = get_args(ToolChoiceMode)
ReasoningState = Literal[
    "thought_signatures", "thinking_blocks", "reasoning_items", "reasoning_content", "reasoning_blocks"
]
"""Reasoning state a provider returns and requires back on the next turn
(docs/provider-loop-rules.md): Gemini's thought signatures, Anthropic's thinking and redacted
thinking blocks, OpenAI Responses' reasoning items, the OpenAI Chat family's `reasoning_content`,
Bedrock Converse's signed reasoning blocks."""
REASONING_STATES: tuple[ReasoningState, ...] = get_args(ReasoningState)


@dataclass(frozen=True)
class Capabilities:
    """What an adapter supports, declared in its registry entry and checked by the conformance
    suite against what it really does (a declaration and the behaviour that differ fail it)."""

    tool_choice: frozenset[ToolChoiceMode] = frozenset(TOOL_CHOICE_MODES)
    """The tool_choice modes it sends; any other is refused before a request is built."""
    parallel_calls: bool = True
    """It decodes several calls in one answer."""
    streamed_tool_calls: bool = True
    """It decodes tool calls from a streamed answer."""
    strict_schemas: bool = False
    """It sends tools in the provider's strict mode (arguments guaranteed to match the schema)."""
    reasoning_state: frozenset[ReasoningState] = frozenset()
    """The reasoning state it keeps from a turn and sends back on the next as its provider
    requires (the conformance suite's reasoning family plays each against the strict emulator)."""

    def __repr__(self) -> str:
        # The sets in declaration order: a repr that is the same in every process (hash seeds).
        return "Capabilities(" + ", ".join(f"{k}={v!r}" for k, v in self.row().items()) + ")"

    def row(self) -> dict[str, object]:
        return {
            "tool_choice": [m for m in TOOL_CHOICE_MODES if m in self.tool_choice],
            "parallel_calls": self.parallel_calls,
            "streamed_tool_calls": self.streamed_tool_calls,
            "strict_schemas": self.strict_schemas,
            "reasoning_state": [s for s in REASONING_STATES if s in self.reasoning_state],
        }


def choice_mode(choice: ToolChoice) -> ToolChoiceMode:
    return "named" if isinstance(choice, ForceTool) else choice


@dataclass(frozen=True)
class EffectiveContract:
    """What an adapter id resolves to after following its contract parents."""

    id: str
    wire: WireName
    schema_dialect: Dialect
    chain: tuple[str, ...]
    """The id, then each parent up to the direct entry."""
    capabilities: Capabilities = Capabilities()
    """The nearest declaration along the chain (a wrapper inherits its parent's)."""


class AdapterSettings(BaseModel):
    """How to reach a provider. Anything unset falls back to the provider module's defaults
    (usually read from its environment variables)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout: float = 60.0
    api_version: str | None = None
    project: str | None = None
    location: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    transport: Any = None
    """An httpx2 async transport to use instead of the network (tests, decode, fault injection)."""

    def secret_key(self) -> str | None:
        """The explicitly configured key, if any (the provider falls back to its key variables)."""
        return self.api_key.get_secret_value() if self.api_key is not None else None


@dataclass(frozen=True)
class PreparedRequest:
    """A request as it will go through the SDK."""

    kwargs: JsonObject
    tools: PreparedTools


_PREPARED_KEPT = 1024
"""Distinct tool lists an adapter keeps prepared (a suite's cases have a few hundred)."""


class Adapter:
    """A provider endpoint speaking one wire."""

    def __init__(
        self,
        *,
        contract: EffectiveContract,
        provider: Provider,
        client: Any,
        settings: AdapterSettings,
        request_hook: Callable[[TurnRequest], TurnRequest] | None = None,
        reply_hook: Callable[[TurnResult], TurnResult] | None = None,
    ) -> None:
        self.contract = contract
        self.provider = provider
        self.client = client
        self.default_model = settings.model or provider.default_model
        self.live_ready = provider.live_ready(api_key=settings.secret_key(), base_url=settings.base_url)
        """Configured to reach the real provider (its key is set), as opposed to a placeholder
        that only cassettes and the emulator answer."""
        self.request_hook = request_hook
        """Rewrites a request before anything else sees it: what a particular server needs
        (the local model's named-tool workaround), applied identically when recording, replaying
        and checking drift."""
        self.reply_hook = reply_hook
        """Rewrites a decoded reply before its tool names are restored: what the server side of a
        target adds to the wire (the local model's parser of calls written as text), applied
        identically when recording and replaying."""
        self._prepared: dict[str, PreparedTools] = {}
        """The tools of the turns played so far, prepared (`_turn`), by their exact JSON."""

    @property
    def id(self) -> str:
        return self.contract.id

    @property
    def wire(self) -> Wire:
        return get_wire(self.contract.wire)

    @property
    def dialect(self) -> Dialect:
        return self.contract.schema_dialect

    def prepare(self, request: TurnRequest) -> PreparedRequest:
        """Rewrite the tools for this adapter's dialect and encode the SDK call (pure)."""
        return self._prepare(request, prepare_tools)

    def _prepare(
        self, request: TurnRequest, tools_of: Callable[[Dialect, list[ToolSpec]], PreparedTools]
    ) -> PreparedRequest:
        if self.request_hook is not None:
            request = self.request_hook(request)
        tools = tools_of(self.dialect, request.tools)
        return PreparedRequest(kwargs=self.wire.encode(request, tools), tools=tools)

    def _prepared_tools(self, dialect: Dialect, tools: list[ToolSpec]) -> PreparedTools:
        """`prepare_tools` once per distinct list of tools: every turn of every episode of a case
        sends the same tools, and the dialect's pass over them is pure. Keyed by the tools' exact
        JSON (names, descriptions, schemas, in order); shared only by this adapter's own turns,
        whose encoded arguments go to the SDK and nowhere else (`prepare` prepares afresh)."""
        try:
            key = json.dumps([[tool.name, tool.description, tool.parameters] for tool in tools])
        except (TypeError, ValueError, RecursionError):
            return prepare_tools(dialect, tools)
        prepared = self._prepared.get(key)
        if prepared is None:
            if len(self._prepared) >= _PREPARED_KEPT:
                self._prepared.clear()
            prepared = self._prepared[key] = prepare_tools(dialect, tools)
        return prepared

    async def turn(self, request: TurnRequest) -> TurnResult:
        """Send one turn and decode it. Provider failures and bad model output are values.

        A plugin's wire plays the turn on a loop of its own (`off_loop.py`): a plugin that
        blocks costs its own episodes (their timeout), never the run."""
        if is_builtin_wire(self.contract.wire):
            return await self._turn(request)
        try:
            return await off_loop(self.contract.wire, lambda: self._turn(request))
        except PluginBlocked as exc:
            return TurnResult(error=ProviderError(kind="timeout", message=str(exc)))

    async def _turn(self, request: TurnRequest) -> TurnResult:
        mode = choice_mode(request.tool_choice)
        if request.tools and mode not in self.contract.capabilities.tool_choice:
            return TurnResult(
                error=ProviderError(
                    kind="refused",
                    message=f"{self.id} does not support tool_choice {mode!r} (its capabilities)",
                )
            )
        prepared = self._prepare(request, self._prepared_tools)
        if prepared.tools.refusals:
            return TurnResult(
                error=ProviderError(
                    kind="refused",
                    message=f"{self.id} cannot send these tools: " + "; ".join(prepared.tools.refusals),
                )
            )
        result = await self.send(prepared.kwargs)
        if self.reply_hook is not None:
            result = self.reply_hook(result)
        if result.tool_calls:
            result.tool_calls = [prepared.tools.restore(call) for call in result.tool_calls]
        return result

    async def send(self, kwargs: JsonObject) -> TurnResult:
        """Send encoded SDK arguments and decode the answer; a response that is not the wire's
        comes back as a `decode` error naming what the server sent."""
        wire = self.wire
        with observe() as exchange:
            try:
                result = await wire.send(self.client, kwargs)
            except Exception as exc:  # a wire bug must still not escape as a crash
                result = TurnResult(error=wire.error_from_exception(exc))
            finally:
                await exchange.release()
        rules = rules_of(wire)
        if result.error is not None and result.error.kind == "http" and rules and rules.refuses(result.error):
            # The provider refused the request for the reasoning state it carried back: the
            # loop's fault, its own error kind (docs/provider-loop-rules.md).
            result.error = result.error.model_copy(update={"kind": "reasoning_state"})
        if result.error is not None and result.error.kind == "decode":
            # Say what the server sent: `200 text/html` is a proxy's page, not the model.
            result.error = result.error.model_copy(
                update={
                    "status": result.error.status or exchange.status,
                    "message": f"{exchange.describe()}: {result.error.message}",
                }
            )
        return result

    async def aclose(self) -> None:
        close = getattr(self.client, "close", None) or getattr(self.client, "aclose", None)
        if close is not None:
            outcome = close()
            if hasattr(outcome, "__await__"):
                await outcome


AdapterFactory = Callable[[EffectiveContract, "Provider", AdapterSettings], Adapter]
"""Builds an adapter from its resolved contract, its provider's data and the settings."""
