"""The tool registry: one entry ties a tool's model-visible definition to its input model,
risk class and handler.

Adapters get only `specs()`; execution goes through the router. Lookup is by dict key only,
so `toString`, `__class__`, `__init__` or `constructor` resolve to nothing unless registered.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from xpeval.adapters.contract import JsonObject, ToolSpec
from xpeval.evals.runtime.arguments import CheckedArguments, check_arguments
from xpeval.evals.runtime.tool_errors import ToolNotFoundError, ToolRegistryError, display_name

Risk = Literal["read", "preview", "terminal"]
"""read: looks things up; preview: computes a proposal without committing it; terminal: a
successful call ends the agent's run (its result is the run's outcome)."""

RISKS: tuple[Risk, ...] = get_args(Risk)

ToolHandler = Callable[[Any], Any]
"""Called with the validated input model instance; returns the tool's value (any value)."""


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One registered tool."""

    id: str
    description: str
    input_model: type[BaseModel]
    risk: Risk
    handler: ToolHandler | None
    parameters: JsonObject
    """The input model's JSON Schema: exactly what the model is shown."""

    def spec(self) -> ToolSpec:
        """A fresh ToolSpec: whoever edits it (a schema pass, a caller) cannot edit this definition."""
        return ToolSpec(name=self.id, description=self.description, parameters=copy.deepcopy(self.parameters))


@dataclass(frozen=True, slots=True)
class Resolution:
    """`registry.resolve(...)`: the tool and its parsed arguments, or why there are none.

    `kind` is "ok", "unknown_tool" or "invalid_args"; `error` is set unless ok.
    """

    kind: Literal["ok", "unknown_tool", "invalid_args"]
    tool: ToolDefinition | None = None
    arguments: BaseModel | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


class ToolRegistry:
    """id -> ToolDefinition, in declaration order; can be sealed; `select` projects a stage."""

    def __init__(self, definitions: Iterable[ToolDefinition] = ()) -> None:
        self._tools: dict[str, ToolDefinition] = {}
        self._sealed = False
        for definition in definitions:
            self._add(definition)

    def register(
        self,
        id: str,
        description: str,
        input_model: type[BaseModel],
        risk: Risk = "read",
        handler: ToolHandler | None = None,
    ) -> ToolDefinition:
        """Add one tool. Refuses a blank or duplicate id, a sealed registry, a risk outside
        read|preview|terminal, and an input model whose JSON Schema is not an object schema."""
        if not isinstance(id, str) or not id.strip():
            raise ToolRegistryError(f"tool id must be a non-blank string, got {id!r}")
        if not isinstance(description, str):
            raise ToolRegistryError(f"tool {id}: description must be a string")
        if risk not in RISKS:
            raise ToolRegistryError(f"tool {id}: risk must be one of {', '.join(RISKS)}, got {risk!r}")
        if not (isinstance(input_model, type) and issubclass(input_model, BaseModel)):
            raise ToolRegistryError(f"tool {id}: input_model must be a pydantic model class")
        if handler is not None and not callable(handler):
            raise ToolRegistryError(f"tool {id}: handler must be callable")
        parameters = input_model.model_json_schema()
        if parameters.get("type") != "object":
            raise ToolRegistryError(
                f"tool {id}: input schema must be an object schema, got type {parameters.get('type')!r}"
            )
        definition = ToolDefinition(
            id=id,
            description=description,
            input_model=input_model,
            risk=risk,
            handler=handler,
            parameters=parameters,
        )
        self._add(definition)
        return definition

    def _add(self, definition: ToolDefinition) -> None:
        """Every way in (register, the constructor, select) refuses blank and duplicate ids."""
        if not isinstance(definition.id, str) or not definition.id.strip():
            raise ToolRegistryError(f"tool id must be a non-blank string, got {definition.id!r}")
        if self._sealed:
            raise ToolRegistryError(f"registry is sealed: cannot register {definition.id}")
        if definition.id in self._tools:
            raise ToolRegistryError(f"duplicate tool id: {definition.id}")
        self._tools[definition.id] = definition

    def seal(self) -> ToolRegistry:
        """Close the registry to further registration; idempotent, existing entries unchanged."""
        self._sealed = True
        return self

    @property
    def sealed(self) -> bool:
        return self._sealed

    def select(self, ids: Iterable[str]) -> ToolRegistry:
        """A sealed sub-catalog holding `ids` (declaration order kept); an unknown id raises
        ToolNotFoundError."""
        wanted = set()
        for tool_id in ids:
            self.require(tool_id)
            wanted.add(tool_id)
        return ToolRegistry(d for d in self._tools.values() if d.id in wanted).seal()

    def has(self, id: object) -> bool:
        """Whether `id` was registered: a dict-key test, never attribute lookup."""
        return isinstance(id, str) and id in self._tools

    def get(self, id: object) -> ToolDefinition | None:
        """The definition registered under `id`, or None."""
        return self._tools.get(id) if isinstance(id, str) else None

    def require(self, id: object) -> ToolDefinition:
        """The definition registered under `id`, or ToolNotFoundError (`unknown tool: <id>`)."""
        definition = self.get(id)
        if definition is None:
            raise ToolNotFoundError(id)
        return definition

    def ids(self) -> tuple[str, ...]:
        """Registered ids in declaration order."""
        return tuple(self._tools)

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(tuple(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self) -> list[ToolSpec]:
        """The ToolSpecs an adapter sends, in declaration order."""
        return [definition.spec() for definition in self._tools.values()]

    def resolve(self, name: object, raw_arguments: object) -> Resolution:
        """Parse model-supplied arguments (a mapping or JSON text) with the tool's input model.

        Never raises: an unregistered name is `unknown_tool`, unparseable or schema-invalid
        arguments are `invalid_args`, each with a one-line error.
        """
        definition = self.get(name)
        if definition is None:
            return Resolution(kind="unknown_tool", error=f"unknown tool: {display_name(name)}")
        checked: CheckedArguments = check_arguments(definition.input_model, raw_arguments)
        if not checked.ok:
            return Resolution(
                kind="invalid_args",
                tool=definition,
                error=f"invalid arguments for {definition.id}: {checked.error}",
            )
        return Resolution(kind="ok", tool=definition, arguments=checked.value)
