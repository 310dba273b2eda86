"""Result types of the dialect passes (`ArgumentMap` lives with the code that applies it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from xpeval.adapters.contract import JsonObject, ToolCall, ToolSpec
from xpeval.adapters.schema import argument_map as _arguments
from xpeval.adapters.schema.argument_map import ArgumentMap

Dialect = str
"""A schema dialect's name: one of `DIALECTS` or a plugin's (`adapters/schema/dialects.py`)."""
DIALECTS: tuple[Dialect, ...] = (
    "openai",
    "openai-strict",
    "anthropic",
    "anthropic-strict",
    "gemini-openapi",
    "gemini-json-schema",
    "moonshot",
)
"""The dialects xpeval ships."""

LossAction = Literal[
    "dropped",
    "relaxed",
    "inlined",
    "moved-to-description",
    "closed-by-budget",
    "renamed",
    "narrowed",
    "reordered",
]
"""What happened to a constraint. `narrowed` is the one change in the other direction: the
rewritten schema refuses values the original allowed (a strict mode closing an open object)."""
FORM_ACTIONS: frozenset[LossAction] = frozenset({"inlined", "renamed", "reordered"})
"""Entries that change a schema's form, not what it accepts: an inlined `$ref`, a renamed tool,
an object's properties in another order."""


Severity = Literal["validation", "guidance", "form"]
"""What a loss changes: what a validator accepts (a constraint dropped, weakened or tightened),
only what the model is told (an annotation, a default, closing an implicitly open object), or
only the form (an inlined `$ref`, a renamed tool, an object's properties reordered)."""
GUIDANCE_KEYWORDS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
    }
)
"""Keywords that tell the model something and constrain no value."""


class Loss(BaseModel):
    """One constraint a pass had to drop or weaken (or, `narrowed`, tighten), and where."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _default_severity(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("severity") is None:
            action, keyword = data.get("action"), data.get("keyword")
            if action in FORM_ACTIONS:
                severity = "form"
            elif keyword in GUIDANCE_KEYWORDS:
                severity = "guidance"
            else:
                severity = "validation"
            data = {**data, "severity": severity}
        return data

    pointer: str
    """JSON pointer into the original schema ("" is the root)."""
    keyword: str
    """The keyword concerned; "*" when a whole node was closed, "name" for a renamed tool."""
    action: LossAction
    detail: str = ""
    severity: Severity = "validation"
    """What the loss changes (`Severity`); when the pass does not say, read from the action and
    the keyword."""

    @property
    def exact(self) -> bool:
        """An entry that changed the form, not the meaning (`FORM_ACTIONS`)."""
        return self.action in FORM_ACTIONS


class PassResult(BaseModel):
    """A dialect pass's answer for one schema: a rewritten schema with its losses, or a refusal."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: JsonObject | None = Field(default=None, alias="schema")
    losses: list[Loss] = Field(default_factory=list)
    refusal: str | None = None
    refusal_rule: str | None = None
    """The id of the rule the refusal follows (`adapters/schema/refusals.REFUSAL_RULES`)."""
    arguments: ArgumentMap = Field(default_factory=ArgumentMap)

    def restore_arguments(self, arguments: JsonObject) -> JsonObject:
        """Arguments a model sent under the rewritten schema, as the original schema means them
        (a null for a field the pass made nullable becomes an omitted field)."""
        if self.schema_ is None or not self.arguments.made_nullable:
            return arguments
        return _arguments.restore_arguments(self.schema_, self.arguments, arguments)

    def arguments_to_wire(self, arguments: JsonObject) -> JsonObject:
        """Arguments valid under the original schema, as a model under the rewritten schema would
        send them (omitted fields the pass made required become null; undeclared keys of objects
        the pass closed are left out, the `narrowed` losses say so)."""
        if self.schema_ is None or self.arguments.empty:
            return arguments
        return _arguments.arguments_to_wire(self.schema_, self.arguments, arguments)


class PreparedTool(BaseModel):
    """One tool after its dialect pass and name mapping."""

    original: ToolSpec
    sent: ToolSpec | None
    """The tool as it goes on the wire; None when refused."""
    losses: list[Loss] = Field(default_factory=list)
    refusal: str | None = None
    refusal_rule: str | None = None
    """The id of the rule the refusal follows (`adapters/schema/refusals.REFUSAL_RULES`)."""
    arguments: ArgumentMap = Field(default_factory=ArgumentMap)


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
        """Map a decoded call back to the canonical tool: its original name, and (strict modes)
        a null for a field the pass made nullable back to an omitted field."""
        for tool in self.tools:
            if tool.sent is None or tool.sent.name != call.name:
                continue
            update: JsonObject = {}
            if tool.original.name != call.name:
                update["name"] = tool.original.name
            if tool.arguments.made_nullable and call.parse_error is None and isinstance(call.arguments, dict):
                restored = _arguments.restore_arguments(tool.sent.parameters, tool.arguments, call.arguments)
                if restored is not call.arguments:
                    update["arguments"] = restored
            return call.model_copy(update=update) if update else call
        return call
