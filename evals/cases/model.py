"""The eval case: tools on offer, the conversation, and the calls a correct model makes.

A case is declarative data. Its tools are canonical `ToolSpec`s and its messages canonical
`Message`s, so a runner sends it through any adapter unchanged. Multi-turn and approval cases
add later user turns (`follow_ups`), scripted tool outputs and the simulated human's approval
decisions, so every run of a case sees the same tool results.

Rules enforced on every case (a case file breaking one is refused with the field's location):
- tool names are unique and non-blank; every expected call and scripted output names a tool of
  the case; every approval names a tool of the case;
- an expected call lists only arguments in its tool's schema, lists every required argument,
  and never marks a required argument optional (`""`);
- the shape matches the category (one call for simple/multiple, two or more for parallel,
  no call for irrelevance, any call for relevance, two or more turns for multi_turn (one in an
  environment), a gated expected call for approval);
- in multi_turn and approval cases every expected call that will run has a scripted output,
  so the path a correct model takes never hits an unscripted tool;
- a `task` case (docs/cases.md, "Task cases") runs in an environment with a simulated user: its
  `task` block, only system messages, no follow-ups (`_check_task`);
- an `unlabelled` case (real traffic, `xpeval cases requests`) carries no expected calls at all
  and is one turn without scripted outputs or approvals: it is judged against a reference row
  (docs/reference-runs.md), never scored on its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from xpeval.adapters.contract import JsonObject, Message, ToolChoice, ToolSpec, TurnRequest
from xpeval.evals.cases.acceptable import OPTIONAL, arguments_fit_pattern
from xpeval.evals.cases.environment import Environment, EnvironmentCall
from xpeval.evals.cases.schema_root import root_properties, root_required
from xpeval.evals.cases.task import Task

Category = Literal[
    "simple",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "relevance",
    "multi_turn",
    "approval",
    "unlabelled",
    "task",
]
CATEGORIES: tuple[Category, ...] = get_args(Category)

MULTI_STEP_CATEGORIES: frozenset[Category] = frozenset({"multi_turn", "approval", "task"})
"""Cases played through the agent loop, scored per user turn (the others are one model turn)."""

Decision = Literal["approve", "deny"]

_SINGLE_CALL: frozenset[str] = frozenset({"simple", "multiple"})
_PARALLEL: frozenset[str] = frozenset({"parallel", "parallel_multiple"})


def is_multi_step(category: str) -> bool:
    return category in MULTI_STEP_CATEGORIES


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_acceptable_shape(alternatives: Any, where: str) -> None:
    """Acceptable values are a list of alternatives; a dict alternative maps keys to such lists.

    Nested objects use the same form as the top level (`{key: [alternatives]}`), and a list
    alternative is compared element by element, so its dict elements use it too.
    """
    if not isinstance(alternatives, list):
        raise ValueError(f"{where}: acceptable values must be a list, got {type(alternatives).__name__}")
    if not alternatives:
        raise ValueError(f"{where}: no acceptable value")
    for alternative in alternatives:
        _check_alternative(alternative, where)


def _check_alternative(alternative: Any, where: str) -> None:
    if isinstance(alternative, dict):
        for key, nested in alternative.items():
            _check_acceptable_shape(nested, f"{where}.{key}")
    elif isinstance(alternative, list):
        for index, element in enumerate(alternative):
            _check_alternative(element, f"{where}[{index}]")


class ExpectedCall(_Frozen):
    """One call a correct model makes: the tool and, per argument, the acceptable values."""

    name: str = Field(min_length=1)
    arguments: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("arguments")
    @classmethod
    def _nested_shape(cls, arguments: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, alternatives in arguments.items():
            _check_acceptable_shape(alternatives, key)
        return arguments

    def canonical_arguments(self) -> JsonObject:
        """The arguments of the first acceptable answer (optional ones left out)."""
        return {key: _first_value(alts) for key, alts in self.arguments.items() if alts[0] != OPTIONAL}


def _first_value(alternatives: list[Any]) -> Any:
    return _concrete(alternatives[0])


def _concrete(alternative: Any) -> Any:
    """A concrete value from one alternative: nested objects take their first alternatives."""
    if isinstance(alternative, dict):
        return {k: _first_value(v) for k, v in alternative.items() if v[0] != OPTIONAL}
    if isinstance(alternative, list):
        return [_concrete(element) for element in alternative]
    return alternative


class Expected(_Frozen):
    """What a correct model does in one turn: no call at all, or exactly these calls (any order);
    in a case with an environment, the ground truth whose execution leaves the state to reach."""

    no_call: bool = False
    any_call: bool = False
    """A call of any offered tool, with any arguments, is right (BFCL's `live_relevance`: a
    request some tool answers, with no one answer to score against)."""
    calls: list[ExpectedCall] = Field(default_factory=list)
    ground_truth: list[EnvironmentCall] | None = None
    """Environment cases only: calls executed on fresh instances; the turn is judged by the
    state they leave and their results (may be empty: the state alone judges the turn). In a
    task case, the expected actions: the state they leave is the one the reward asks for."""

    @model_serializer(mode="wrap")
    def _without_unset_any_call(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A turn that does not accept any call dumps as it did before the field existed: case
        # digests (run headers, cassettes) of every existing case stay what they were.
        data = handler(self)
        if isinstance(data, dict) and not self.any_call:
            data.pop("any_call", None)
        return data

    @model_validator(mode="after")
    def _calls_agree_with_no_call(self) -> Expected:
        if self.ground_truth is not None:
            if self.no_call or self.calls:
                raise ValueError("ground_truth replaces calls and no_call: give only ground_truth")
            return self
        if self.no_call and self.calls:
            raise ValueError("no_call is true but calls are listed")
        if self.any_call:
            if self.no_call or self.calls:
                raise ValueError("any_call is true: list no calls and leave no_call false")
            return self
        if not self.no_call and not self.calls:
            raise ValueError("no calls listed: set no_call: true when no tool should be called")
        return self


class FollowUp(_Frozen):
    """A later turn: messages appended after the previous turn ends, and what is expected then."""

    messages: list[Message] = Field(min_length=1)
    expected: Expected
    added_tools: list[ToolSpec] = Field(default_factory=list)
    """Tools offered from this turn on (BFCL's held-out functions), besides the earlier ones."""
    adapter: str | None = None
    """The adapter that plays this turn and the ones after it (a runtime choosing the provider per
    turn): the history so far is converted for it (docs/provider-loop-rules.md, "Handoff"). None:
    the adapter that played the turn before."""

    @model_serializer(mode="wrap")
    def _without_unset_adapter(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A follow-up that names no adapter dumps as it did before the field existed: case
        # digests (run headers, cassettes) of every existing case stay what they were.
        data = handler(self)
        if isinstance(data, dict) and self.adapter is None:
            data.pop("adapter", None)
        return data


class ScriptedOutput(_Frozen):
    """A deterministic tool result, served when a call matches `tool` and `arguments`.

    `arguments` uses the acceptable-value form; only the listed arguments are compared (an
    argument whose list holds `""` may be absent). No `arguments` matches any call of the tool.
    Rules are tried in file order; the first match wins.
    """

    tool: str = Field(min_length=1)
    arguments: dict[str, list[Any]] | None = None
    output: Any
    is_error: bool = False

    @field_validator("arguments")
    @classmethod
    def _nested_shape(cls, arguments: dict[str, list[Any]] | None) -> dict[str, list[Any]] | None:
        for key, alternatives in (arguments or {}).items():
            _check_acceptable_shape(alternatives, key)
        return arguments

    @property
    def content(self) -> str:
        """The text sent back to the model: a string as is, anything else as compact JSON."""
        if isinstance(self.output, str):
            return self.output
        return json.dumps(self.output, ensure_ascii=False, separators=(",", ":"))


class Turn(_Frozen):
    """One user turn as a runner plays it: messages to append, then the calls expected."""

    index: int
    messages: list[Message]
    expected: Expected | None
    """None in an unlabelled case: judged against a reference row only."""
    adapter: str | None = None
    """The adapter a follow-up names for itself and the turns after it (`FollowUp.adapter`)."""


class Case(_Frozen):
    """One eval case (see the module docstring for the rules every case obeys)."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    category: Category
    tools: list[ToolSpec] = Field(default_factory=list)
    messages: list[Message] = Field(min_length=1)
    expected: Expected | None = None
    """What a correct model does in the first turn; None only in an `unlabelled` case."""
    tool_choice: ToolChoice = "auto"
    """Sent with every request of the case (real traffic keeps the tool_choice it was sent with)."""
    follow_ups: list[FollowUp] = Field(default_factory=list)
    tool_outputs: list[ScriptedOutput] = Field(default_factory=list)
    approvals: dict[str, Decision] = Field(default_factory=dict)
    """Gated tools and what the simulated human answers when one is called."""
    origin: str = "xpeval"
    """Where the case comes from: `xpeval` (written for this project) or `bfcl:<BFCL id>`."""
    environment: Environment | None = None
    """The classes whose methods are the tools (docs/cases.md, "Tool environments"): calls run
    against them and the case is judged by the state they leave."""
    task: Task | None = None
    """A `task` case's simulated user and required communication (docs/cases.md, "Task cases")."""

    @model_serializer(mode="wrap")
    def _without_unset_task(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A case that is no task dumps as it did before the field existed: its digest (run
        # headers, emulated cassettes) stays what it was.
        data = handler(self)
        if isinstance(data, dict) and self.task is None:
            data.pop("task", None)
        return data

    @property
    def turns(self) -> list[Turn]:
        first = Turn(index=0, messages=list(self.messages), expected=self.expected)
        rest = [
            Turn(index=i + 1, messages=list(f.messages), expected=f.expected, adapter=f.adapter)
            for i, f in enumerate(self.follow_ups)
        ]
        return [first, *rest]

    @property
    def all_tools(self) -> list[ToolSpec]:
        """Every tool the case offers at some turn: `tools`, then each follow-up's `added_tools`."""
        return [*self.tools, *(tool for follow_up in self.follow_ups for tool in follow_up.added_tools)]

    def offered_tools(self, turn: int) -> list[ToolSpec]:
        """The tools offered in turn `turn`: the case's, and those added by follow-ups up to it."""
        added = (tool for follow_up in self.follow_ups[:turn] for tool in follow_up.added_tools)
        return [*self.tools, *added]

    def tool(self, name: str) -> ToolSpec | None:
        return next((tool for tool in self.all_tools if tool.name == name), None)

    def turn_request(self, model: str, messages: list[Message] | None = None) -> TurnRequest:
        """The request for one model turn: the case's tools with the conversation so far.

        Without `messages`, the conversation is the case's opening messages (turn 0).
        """
        return TurnRequest(
            model=model,
            messages=list(messages if messages is not None else self.messages),
            tools=list(self.tools),
            tool_choice=self.tool_choice,
        )

    @property
    def labelled(self) -> bool:
        """Whether the case says what a correct model does (an unlabelled one does not)."""
        return self.expected is not None

    def scripted_output(self, tool: str, arguments: Mapping[str, Any]) -> ScriptedOutput | None:
        """The first scripted output whose tool and argument pattern match the call, if any."""
        for rule in self.tool_outputs:
            if rule.tool != tool:
                continue
            if rule.arguments is None or arguments_fit_pattern(arguments, rule.arguments):
                return rule
        return None

    # -- validation -------------------------------------------------------------------------

    @model_validator(mode="after")
    def _consistent(self) -> Case:
        """Every rule relating the case's fields, each problem found (one a line: the loader
        reports each; docs/cases.md), not only the first."""
        problems = [
            *self._check_tool_names(),
            *(
                problem
                for where, call in self._expected_calls()
                for problem in self._check_call_against_schema(where, call)
            ),
            *self._check_category_shape(),
            *self._check_scripted_path(),
            *self._check_task(),
            *self._check_environment(),
        ]
        if problems:
            raise ValueError("\n".join(dict.fromkeys(problems)))
        return self

    def _expected_calls(self) -> Iterator[tuple[str, ExpectedCall]]:
        for turn in self.turns:
            prefix = "expected" if turn.index == 0 else f"follow_ups.{turn.index - 1}.expected"
            for index, call in enumerate(turn.expected.calls if turn.expected else []):
                yield f"{prefix}.calls.{index}", call

    def _check_tool_names(self) -> Iterator[str]:
        seen: set[str] = set()
        named = [(f"tools.{index}", tool) for index, tool in enumerate(self.tools)]
        named += [
            (f"follow_ups.{turn}.added_tools.{index}", tool)
            for turn, follow_up in enumerate(self.follow_ups)
            for index, tool in enumerate(follow_up.added_tools)
        ]
        for where, tool in named:
            if not tool.name.strip():
                yield f"{where}.name: blank tool name"
            elif tool.name in seen:
                yield f"{where}.name: duplicate tool {tool.name!r}"
            seen.add(tool.name)
        for index, rule in enumerate(self.tool_outputs):
            if rule.tool not in seen:
                yield f"tool_outputs.{index}.tool: {rule.tool!r} is not a tool of this case"
        for name in self.approvals:
            if name not in seen:
                yield f"approvals.{name}: not a tool of this case"

    def _check_call_against_schema(self, where: str, call: ExpectedCall) -> Iterator[str]:
        tool = self.tool(call.name)
        if tool is None:
            yield f"{where}.name: {call.name!r} is not a tool of this case"
            return
        yield from _check_argument_names(where, call.name, call.arguments, tool)
        for argument in root_required(tool.parameters):
            if OPTIONAL in call.arguments.get(argument, ()):
                yield f'{where}.arguments.{argument}: required, so it cannot be optional ("")'

    def _check_unlabelled(self) -> Iterator[str]:
        if (self.category == "unlabelled") != (self.expected is None):
            yield (
                "expected: required, except in category unlabelled (which has none: it is judged "
                "against a reference)"
            )
        if self.expected is None and (self.follow_ups or self.tool_outputs or self.approvals):
            yield "category unlabelled: one turn, without tool_outputs or approvals"

    def _check_category_shape(self) -> Iterator[str]:
        yield from self._check_unlabelled()
        if self.expected is None:
            return  # unlabelled: no other shape to check
        yield from self._check_one_turn_shape(self.expected)
        if self.category == "multi_turn" and not self.follow_ups and self.environment is None:
            yield "category multi_turn: needs follow_ups (two or more user turns; one with an environment)"
        if self.category == "approval":
            if not self.approvals:
                yield "category approval: approvals must name the gated tools"
            elif not any(call.name in self.approvals for _, call in self._expected_calls()):
                yield "category approval: no expected call names a gated tool"

    def _check_one_turn_shape(self, expected: Expected) -> Iterator[str]:
        """The one-turn categories: how many calls each expects."""
        calls = expected.calls
        if self.category in _SINGLE_CALL and (len(calls) != 1 or self.follow_ups):
            yield f"category {self.category}: expects exactly one call in one turn"
        if self.category in _PARALLEL and (len(calls) < 2 or self.follow_ups):
            yield f"category {self.category}: expects two or more calls in one turn"
        if self.category == "irrelevance" and (not expected.no_call or self.follow_ups):
            yield "category irrelevance: expects no call (expected.no_call: true) in one turn"
        relevance = self.category == "relevance"
        if relevance != expected.any_call or (relevance and self.follow_ups):
            yield "category relevance: expects any call (expected.any_call: true) in one turn; only it does"

    def _check_environment(self) -> Iterator[str]:
        """An environment answers every call and the state judges the turns: each turn gives a
        ground truth (naming tools offered by then, with their required arguments), and there is
        nothing scripted beside it."""
        with_ground_truth = [
            t.expected is not None and t.expected.ground_truth is not None for t in self.turns
        ]
        if self.environment is None:
            if any(with_ground_truth):
                yield "expected.ground_truth: only a case with an environment executes a ground truth"
            return
        if self.category not in ("multi_turn", "task"):
            yield "environment: only multi_turn and task cases run in an environment"
        if not all(with_ground_truth):
            yield "environment: every turn's expected must be a ground_truth (the state judges it)"
        if self.tool_outputs or self.approvals:
            yield "environment: the environment answers every call (no tool_outputs or approvals)"
        for turn in self.turns:
            offered = {tool.name: tool for tool in self.offered_tools(turn.index)}
            prefix = "expected" if turn.index == 0 else f"follow_ups.{turn.index - 1}.expected"
            for index, call in enumerate(turn.expected.ground_truth or [] if turn.expected else []):
                yield from self._check_ground_truth_call(
                    f"{prefix}.ground_truth.{index}", call, offered, turn.index
                )

    def _check_ground_truth_call(
        self, where: str, call: EnvironmentCall, offered: Mapping[str, ToolSpec], turn: int
    ) -> Iterator[str]:
        tool = offered.get(call.name)
        if tool is None:
            later = " (it is added in a later turn)" if self.tool(call.name) is not None else ""
            yield f"{where}.name: {call.name!r} is not offered in turn {turn}{later}"
            return
        yield from _check_argument_names(where, call.name, call.arguments, tool)

    def _check_scripted_path(self) -> Iterator[str]:
        if self.category not in MULTI_STEP_CATEGORIES or self.environment is not None:
            return
        for where, call in self._expected_calls():
            if self.approvals.get(call.name) == "deny":
                continue  # a denied call never reaches its handler
            if (
                self.tool(call.name) is not None
                and self.scripted_output(call.name, call.canonical_arguments()) is None
            ):
                yield f"{where}: no tool_outputs entry answers this call to {call.name!r}"

    def _check_task(self) -> Iterator[str]:
        """A task is one conversation the user model drives: an environment, the expected
        actions as the first turn's ground truth, the agent's instructions as system messages,
        and room for every scripted utterance and the emulator's closing STOP."""
        if (self.category == "task") != (self.task is not None):
            yield "task: a task case (category task) has a task block, and only a task case does"
        if self.task is None:
            return
        if self.environment is None:
            yield "task: a task runs in an environment (environment: missing)"
        if self.follow_ups:
            yield "follow_ups: a task's user turns come from its user model (task.user)"
        if any(message.role != "system" for message in self.messages):
            yield (
                "messages: a task's messages are the agent's instructions (system); the user model "
                "writes every user message"
            )
        if len(self.task.user.script) + 1 > self.task.max_turns:
            yield (
                f"task.max_turns: {self.task.max_turns} leaves no room for the script's "
                f"{len(self.task.user.script)} lines and the closing STOP"
            )


__all__ = [
    "CATEGORIES",
    "OPTIONAL",
    "Case",
    "Category",
    "Decision",
    "Environment",
    "EnvironmentCall",
    "Expected",
    "ExpectedCall",
    "FollowUp",
    "ScriptedOutput",
    "Task",
    "Turn",
]


def _check_argument_names(
    where: str, name: str, arguments: Mapping[str, Any], tool: ToolSpec
) -> Iterator[str]:
    """Every argument a call names is in its tool's schema, and every required one is there."""
    properties = root_properties(tool.parameters)
    for argument in arguments:
        if argument not in properties:
            yield f"{where}.arguments.{argument}: not in the schema of {name!r}"
    for argument in root_required(tool.parameters):
        if argument not in arguments:
            yield f"{where}.arguments: {name!r} requires {argument!r}, which is missing"
