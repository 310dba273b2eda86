"""Canonical types every adapter speaks: the only shapes that cross the provider boundary.

Nothing here knows a wire format. Wires translate these to and from their provider's SDK
types; everything above the adapters (runtime, scoring, runner) sees only these.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JsonObject = dict[str, Any]

WireName = str
"""A wire's name: one registered as a `WirePlugin` (`xpeval.adapters.wires.wire_names()` lists
every one, xpeval's own first; `xpeval.plugin.register_wire` adds one)."""

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "refusal", "error", "other"]
"""Normalized finish reason; the provider's own value is kept in `TurnResult.raw_finish_reason`."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class ToolSpec(_Model):
    """A tool as the model sees it: name, description and the JSON Schema of its arguments."""

    name: str
    description: str = ""
    parameters: JsonObject = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolCall(_Model):
    """One call the model made.

    `arguments` is always a dict: a call whose argument text is not a JSON object keeps that
    text in `raw_arguments` and says why in `parse_error` instead of raising.
    """

    id: str | None = None
    """The provider's call id; None when the provider gave none (never an invented one)."""
    name: str
    arguments: JsonObject = Field(default_factory=dict)
    raw_arguments: str | None = None
    parse_error: str | None = None
    provider_data: JsonObject = Field(default_factory=dict)
    """Opaque per-wire data that must be echoed back (Gemini thought signatures, Responses item ids)."""


class SystemMessage(_Model):
    role: Literal["system"] = "system"
    content: str


class UserMessage(_Model):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(_Model):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    provider_data: JsonObject = Field(default_factory=dict)
    """Opaque per-wire data from the turn that produced this message (reasoning items, thinking
    blocks). Keyed by wire name; a wire uses only its own key."""


class ToolResultMessage(_Model):
    """The result of one tool call sent back to the model."""

    role: Literal["tool"] = "tool"
    tool_call_id: str | None
    name: str
    content: str
    is_error: bool = False


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")
]


class ForceTool(_Model):
    """tool_choice that forces one named tool."""

    name: str


ToolChoice = Literal["auto", "none", "required"] | ForceTool


class Usage(_Model):
    """A turn's tokens. `input_tokens` counts every input token, cached ones included (what the
    OpenAI wires report and genai-prices prices); the cache fields say how many of them were read
    from or written to the provider's prompt cache, where the wire reports it."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


_RETRYABLE_STREAM_TYPES = frozenset(
    {
        "overloaded_error",
        "api_error",
        "rate_limit_error",
        "server_error",
        "internal_server_error",
        "resource_exhausted",
        "unavailable",
        "internal",
        "429",
        "500",
        "502",
        "503",
        "504",
        "529",
    }
)


class ProviderError(_Model):
    """A failure reported by the provider or the transport, as a value.

    `type` is the provider's error type (OpenAI error.type, or its code as a string when no
    type is given; Anthropic error.type; Gemini error.status).
    """

    status: int | None = None
    type: str | None = None
    message: str
    retry_after: float | None = None
    """Seconds the provider asked us to wait (Retry-After / retry-after-ms), when it said."""
    kind: Literal[
        "http",
        "stream",
        "timeout",
        "connection",
        "truncated",
        "decode",
        "refused",
        "reasoning_state",
        "handoff",
    ] = "http"
    """Where it happened: an HTTP status, an error inside a 200 stream, a timeout, a broken
    connection, a stream that ended without its terminal event, a response that is not the
    wire's (HTML, empty, invalid JSON), a request the adapter refused to send, or the provider
    refusing a request whose reasoning state (thought signatures, thinking blocks, reasoning
    items) a turn dropped, moved or altered (docs/provider-loop-rules.md), or a conversation that
    cannot be handed to the adapter a turn names (a handoff rule makes it impossible: "Handoff")."""

    @property
    def bad_response(self) -> bool:
        """The response's own bytes are wrong (not the wire's JSON, or a stream cut short):
        replayed from a cassette, that is the cassette's fault, never the model's."""
        return self.kind in ("decode", "truncated")

    @property
    def retryable(self) -> bool:
        if self.kind in ("timeout", "connection", "truncated"):
            return True
        if self.kind in ("decode", "refused", "reasoning_state", "handoff"):
            return False
        if self.status is not None:
            return self.status in (408, 409, 429) or self.status >= 500
        # An error frame inside a 200 stream has no status of its own: its type tells.
        return (self.type or "").lower() in _RETRYABLE_STREAM_TYPES


class TurnRequest(_Model):
    """One model turn: the conversation so far and the tools on offer."""

    model: str
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    stream: bool = False
    max_output_tokens: int | None = None
    temperature: float | None = None


class TurnResult(_Model):
    """What one turn produced, decoded from a plain or streamed response.

    An error is a value here too: `error` is set, and whatever arrived before it (text, whole
    tool calls) is kept.
    """

    text: str | None = None
    """Visible assistant text; None when there is none (never ""). Reasoning is not text, and
    neither is a refusal."""
    refusal: str | None = None
    """The model's refusal to answer (Chat `message.refusal`, a Responses `refusal` part):
    no call, and not the visible text."""
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: FinishReason | None = None
    raw_finish_reason: str | None = None
    usage: Usage | None = None
    response_id: str | None = None
    model: str | None = None
    error: ProviderError | None = None
    provider_data: JsonObject = Field(default_factory=dict)
    status: int | None = None
    """HTTP status of the response this was decoded from, when known."""

    def to_message(self) -> AssistantMessage:
        """The assistant message that goes back into the conversation for the next turn."""
        return AssistantMessage(
            content=self.text, tool_calls=list(self.tool_calls), provider_data=dict(self.provider_data)
        )


__all__ = [
    "AssistantMessage",
    "FinishReason",
    "ForceTool",
    "JsonObject",
    "Message",
    "ProviderError",
    "SystemMessage",
    "ToolCall",
    "ToolChoice",
    "ToolResultMessage",
    "ToolSpec",
    "TurnRequest",
    "TurnResult",
    "Usage",
    "UserMessage",
    "WireName",
]
