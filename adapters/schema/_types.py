"""Result types of the dialect passes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from adapters.contract import JsonObject, ToolCall, ToolSpec

Dialect = Literal[
    "openai",
    "openai-strict",
    "anthropic",
    "anthropic-strict",
    "gemini-openapi",
    "gemini-json-schema",
    "moonshot",
]
DIALECTS: tuple[Dialect, ...] = (
    "openai",
    "openai-strict",
    "anthropic",
    "anthropic-strict",
    "gemini-openapi",
    "gemini-json-schema",
    "moonshot",
)

LossAction = Literal["dropped", "relaxed", "inlined", "moved-to-description", "closed-by-budget", "renamed"]


class Loss(BaseModel):
    """One constraint a pass had to drop or weaken, and where."""

    model_config = ConfigDict(frozen=True)

    pointer: str
    """JSON pointer into the original schema ("" is the root)."""
    keyword: str
    action: LossAction
    detail: str = ""


class PassResult(BaseModel):
    """A dialect pass's answer for one schema: a rewritten schema with its losses, or a refusal."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: JsonObject | None = Field(default=None, alias="schema")
    losses: list[Loss] = Field(default_factory=list)
    refusal: str | None = None


class PreparedTool(BaseModel):
    """One tool after its dialect pass and name mapping."""

    original: ToolSpec
    sent: ToolSpec | None
    """The tool as it goes on the wire; None when refused."""
    losses: list[Loss] = Field(default_factory=list)
    refusal: str | None = None


class PreparedTools(BaseModel):
    """All the tools of one request, prepared for one dialect."""

    dialect: Dialect
    tools: list[PreparedTool] = Field(default_factory=list)
    strict: bool | None = None
    """What the wire sends as the tool's `strict` flag (None: send nothing)."""

    @property
    def sent(self) -> list[ToolSpec]:
        return [t.sent for t in self.tools if t.sent is not None]

    @property
    def refusals(self) -> list[str]:
        return [f"{t.original.name}: {t.refusal}" for t in self.tools if t.refusal]

    def wire_name(self, name: str) -> str:
        """The name the provider knows a tool by (unchanged for tools not in this request)."""
        for tool in self.tools:
            if tool.original.name == name and tool.sent is not None:
                return tool.sent.name
        return name

    def restore(self, call: ToolCall) -> ToolCall:
        """Map a decoded call back to the canonical tool name."""
        for tool in self.tools:
            if tool.sent is not None and tool.sent.name == call.name:
                if tool.original.name == call.name:
                    return call
                return call.model_copy(update={"name": tool.original.name})
        return call
