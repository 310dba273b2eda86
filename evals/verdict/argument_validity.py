"""Whether a returned call's arguments are valid for its tool's JSON Schema (pure).

Each call an episode returned is validated against the ORIGINAL schema of the case's tool (what
the case says the tool accepts, not the schema a dialect pass rewrote for one provider), with
`jsonschema` and the draft the schema's `$schema` names (2020-12 when it names none). A call is:

- valid: its arguments are a JSON object the schema accepts;
- invalid, with the first violation named: arguments that are not JSON, a tool the case does not
  offer, or arguments that break the schema (`/unit: 'kelvin' is not one of ['c', 'f']`);
- not judged, with the reason: its arguments were cut to the row bound (`MAX_VALUE_BYTES`: what
  is left is not the model's value), the schema names a draft jsonschema does not know, is not a
  valid schema of its draft, or nests beyond `MAX_DEPTH`, or the arguments nest beyond it.

An episode's `schema_valid` follows docs/reference-runs.md (the vendor verifier's schema
accuracy): it is judged when the episode returned at least one call and ended without an error;
true when every call is valid, false when any call is invalid, none otherwise (a call that could
not be judged never counts as valid).

Validation is bounded: schemas and arguments are measured without recursion first
(`xpeval.adapters.schema.safe_json`), and anything deeper than `MAX_DEPTH` or larger than
`MAX_SCHEMA_NODES` is not judged, so a hostile schema or deeply nested arguments cannot exhaust
the stack or the time of a run. What is not bounded is a `pattern` that backtracks badly on a
long string (Python's `re` has no time limit); rows keep at most 4 KB of any string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jsonschema
import referencing.exceptions

from xpeval.adapters.schema.safe_json import nesting_depth
from xpeval.evals.results.rows import ResultRow

if TYPE_CHECKING:
    from xpeval.evals.cases.model import Case

DEFAULT_DRAFT = jsonschema.Draft202012Validator
"""The draft a schema without `$schema` is read in."""
MAX_DEPTH = 64
"""Deepest schema or argument value validated: jsonschema descends recursively, several Python
frames per level, so this stays far from the interpreter's limit."""
MAX_SCHEMA_NODES = 20_000
"""Largest schema (objects and arrays in it) validated."""
MAX_REASON = 300
"""What a reason keeps of jsonschema's message (it quotes the offending value whole)."""


@dataclass(frozen=True)
class CallValidity:
    """The verdict on one call's arguments."""

    valid: bool | None
    """True: the schema accepts them; False: it does not; None: not judged."""
    reason: str | None = None
    """The first violation (invalid), or why the call was not judged; None when valid."""


VALID = CallValidity(True)


def validate_call(
    tools: Mapping[str, Mapping[str, Any]],
    name: str,
    arguments: Mapping[str, Any],
    *,
    parse_error: str | None = None,
    cut: bool = False,
) -> CallValidity:
    """Validate one call against the schema of the tool it names (`tools`: name -> schema)."""
    return ToolValidators(tools).validity(name, arguments, parse_error=parse_error, cut=cut)


class ToolValidators:
    """The schemas of one case's tools (name -> schema), each measured and compiled once however
    many calls are validated against it (the gate's chain of custody validates a million calls
    against a case set's few schemas). The schemas must not change while it is in use."""

    def __init__(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        self._tools = tools
        self._made: dict[str, jsonschema.protocols.Validator | CallValidity] = {}
        self._plans: dict[str, SchemaPlan | None] = {}

    def validity(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        parse_error: str | None = None,
        cut: bool = False,
        reasons: bool = True,
    ) -> CallValidity:
        """One call's verdict (see `validate_call`); `reasons=False`: an invalid call without its
        first violation (the same verdict, without ranking every violation to name one)."""
        if parse_error is not None:
            return CallValidity(False, f"{name}: arguments are not a JSON object ({parse_error})")
        schema = self._tools.get(name)
        if schema is None:
            return CallValidity(False, f"{name}: no tool of that name was offered")
        if cut:
            return CallValidity(None, f"{name}: arguments cut to the row bound (4 KB): not judged")
        if nesting_depth(arguments) > MAX_DEPTH:
            return CallValidity(None, f"{name}: arguments nest deeper than {MAX_DEPTH} levels: not judged")
        validator = self._made.get(name)
        if validator is None:
            validator = self._made[name] = _schema_validator(name, schema)
            self._plans[name] = SchemaPlan.of(validator) if not isinstance(validator, CallValidity) else None
        if isinstance(validator, CallValidity):
            return validator
        plan = self._plans[name]
        if not reasons and plan is not None:
            return VALID if plan.valid(validator, dict(arguments)) else CallValidity(False)
        try:
            errors = validator.iter_errors(dict(arguments))
            if not reasons:
                # Every error still made (one past the first may raise, and the verdict is then
                # "not judged", as with reasons), none ranked.
                return VALID if sum(1 for _ in errors) == 0 else CallValidity(False)
            error = jsonschema.exceptions.best_match(errors)
        except (referencing.exceptions.Unresolvable, RecursionError) as exc:
            return CallValidity(
                None, f"{name}: the schema cannot be applied ({type(exc).__name__}): not judged"
            )
        if error is None:
            return VALID
        return CallValidity(False, f"{name}: {_pointer(error)}: {_short(error.message)}")


_FLAT_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "pattern", "format", "minLength", "maxLength", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
        "minProperties", "maxProperties", "required", "dependentRequired",
    }
)  # fmt: skip
"""jsonschema's keywords that judge the value in hand and never descend into a subschema (nor
follow a reference)."""

Check = tuple[Callable[..., Any], Any]
"""One keyword's function (the validator class's own, `VALIDATORS`) and its value in the schema."""

_APPLICATORS = ("properties", "items", "anyOf", "allOf", "additionalProperties", "$ref")
"""The subschema keywords a `SchemaPlan` applies itself, when they are the 2020-12 draft's."""


@dataclass(frozen=True)
class SchemaPlan:
    """A schema compiled for verdicts without reasons: its keywords that judge the value in hand
    (`_FLAT_KEYWORDS`, each the validator class's own function, called as `iter_errors` calls
    it), and its `properties`, `items`, `anyOf` and `allOf` subschemas and a `$ref` to a root
    definition as plans of their own, without the validator jsonschema makes for each subschema
    on the way down (most of its time on a tool's arguments). The same verdict
    (tests/scoring/test_schema_plan.py compares them); a schema with any other subschema
    keyword (`prefixItems`, `oneOf`, `not`, ...), another kind of reference, a keyword that
    moves references (`$id`, ...) or of another draft than 2020-12 has no plan and is validated
    by jsonschema."""

    schema: Mapping[str, Any]
    checks: tuple[Check, ...]
    properties: tuple[tuple[str, SchemaPlan], ...] = ()
    items: SchemaPlan | None = None
    any_of: tuple[SchemaPlan, ...] | None = None
    all_of: tuple[SchemaPlan, ...] = ()
    """`allOf`'s branches, and the definition a local `$ref` names (applied beside its siblings)."""

    @classmethod
    def of(cls, validator: jsonschema.protocols.Validator) -> SchemaPlan | None:
        """The plan of a compiled validator's schema; None when it has none."""
        known = validator.VALIDATORS
        standard = jsonschema.Draft202012Validator.VALIDATORS
        schema = validator.schema
        if any(known.get(k) is not standard[k] for k in _APPLICATORS) or not isinstance(schema, dict):
            return None
        if _has_scope_keyword(schema):
            return None
        return _Planner(known, schema).plan(schema)

    def valid(self, validator: jsonschema.protocols.Validator, instance: Any) -> bool:
        """Whether jsonschema finds no error in `instance`."""
        for function, value in self.checks:
            if _fails(function(validator, value, instance, self.schema)):
                return False
        if self.properties and isinstance(instance, dict):
            for name, plan in self.properties:
                if name in instance and not plan.valid(validator, instance[name]):
                    return False
        items = self.items
        if (
            items is not None
            and isinstance(instance, list)
            and not all(items.valid(validator, i) for i in instance)
        ):
            return False
        if not all(plan.valid(validator, instance) for plan in self.all_of):
            return False
        return self.any_of is None or any(plan.valid(validator, instance) for plan in self.any_of)


_LOCAL_DEF = "#/$defs/"
"""The one kind of `$ref` a plan follows: to a definition in the root's `$defs`, by plain name."""
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]+")
"""A definition name that needs no escaping in a JSON pointer or a URI."""
_SCOPE_KEYWORDS = ("$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor")
"""Keywords that change what a `$ref` resolves to: a schema holding any has no plan."""


@dataclass
class _Parts:
    """What a schema's plan is made of, gathered keyword by keyword."""

    checks: list[Check] = field(default_factory=list)
    properties: list[tuple[str, SchemaPlan]] = field(default_factory=list)
    items: SchemaPlan | None = None
    any_of: tuple[SchemaPlan, ...] | None = None
    all_of: list[SchemaPlan] = field(default_factory=list)


class _Planner:
    """`SchemaPlan.of` for one schema: its subschemas planned, a local `$ref` followed to its
    definition (a definition that refers back to itself, directly or not, has no plan)."""

    def __init__(self, known: Mapping[str, Callable[..., Any]], root: Mapping[str, Any]) -> None:
        self._known = known
        defs = root.get("$defs")
        self._defs: Mapping[str, Any] = defs if isinstance(defs, dict) else {}
        self._following: set[str] = set()

    def plan(self, schema: Any) -> SchemaPlan | None:
        if schema is True:
            return SchemaPlan({}, ())
        if not isinstance(schema, dict):
            return None
        parts = _Parts()
        for keyword, value in schema.items():
            if not self._add(parts, keyword, value):
                return None
        return SchemaPlan(
            schema,
            tuple(parts.checks),
            tuple(parts.properties),
            parts.items,
            parts.any_of,
            tuple(parts.all_of),
        )

    def _add(self, parts: _Parts, keyword: str, value: Any) -> bool:
        """One keyword of a schema added to its plan's parts; False when the schema has no plan."""
        if keyword in _FLAT_KEYWORDS or (keyword == "additionalProperties" and isinstance(value, bool)):
            parts.checks.append((self._known[keyword], value))
        elif keyword == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                plan = self.plan(sub)
                if plan is None:
                    return False
                parts.properties.append((name, plan))
        elif keyword == "items":
            parts.items = self.plan(value)
            return parts.items is not None
        elif keyword in ("anyOf", "allOf") and isinstance(value, list) and value:
            branches = [self.plan(sub) for sub in value]
            planned = [branch for branch in branches if branch is not None]
            if len(planned) < len(branches):
                return False
            if keyword == "anyOf":
                parts.any_of = tuple(planned)
            else:
                parts.all_of.extend(planned)
        elif keyword == "$ref":
            target = self._definition(value)
            if target is None:
                return False
            parts.all_of.append(target)
        elif keyword in self._known:
            return False
        return True

    def _definition(self, ref: Any) -> SchemaPlan | None:
        """The plan of the root definition `ref` names; None for any other reference."""
        if not isinstance(ref, str) or not ref.startswith(_LOCAL_DEF):
            return None
        name = ref.removeprefix(_LOCAL_DEF)
        if not _PLAIN_NAME.fullmatch(name) or name not in self._defs or name in self._following:
            return None
        self._following.add(name)
        try:
            return self.plan(self._defs[name])
        finally:
            self._following.discard(name)


def _has_scope_keyword(schema: Any) -> bool:
    """Whether any (sub)schema holds a keyword of `_SCOPE_KEYWORDS` (the schema is measured shallow)."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(keyword in item for keyword in _SCOPE_KEYWORDS):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _fails(errors: Any) -> bool:
    """Whether a keyword function yielded an error (it may return None for none)."""
    return errors is not None and next(iter(errors), None) is not None


def _schema_validator(name: str, schema: Mapping[str, Any]) -> jsonschema.protocols.Validator | CallValidity:
    """The compiled validator of a tool's schema, or the verdict of every call against a schema
    that is not judged (too deep or large, of an unknown draft, not a valid schema)."""
    if nesting_depth(schema) > MAX_DEPTH or _nodes(schema) > MAX_SCHEMA_NODES:
        reason = (
            f"the tool's schema nests deeper than {MAX_DEPTH} levels or has over {MAX_SCHEMA_NODES} nodes"
        )
        return CallValidity(None, f"{name}: {reason}: not judged")
    validator = _validator(json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str))
    if isinstance(validator, str):
        return CallValidity(None, f"{name}: {validator}: not judged")
    return validator


def with_schema_validity(row: ResultRow, case: Case, *, judged: bool = True) -> ResultRow:
    """The row with each stored call's verdict and the episode's `schema_valid`, judged from
    what the row keeps (so anyone can judge it again from the results file); `judged=False`
    (an episode that ended in an error) leaves the episode unjudged, its calls still judged."""
    if not row.calls:
        return row
    verdicts = call_validities(row, ToolValidators(_case_tools(case)))
    calls = [
        call.model_copy(
            update={
                "schema_valid": verdict.valid,
                # Whole, cut: a violation names the tool and the path, both as long as a model made
                # them (`xpeval.evals.results.rows.RESERVED_CALL_BYTES` holds what is left).
                "schema_error": _short(verdict.reason) if verdict.reason is not None else None,
            }
        )
        for call, verdict in zip(row.calls, verdicts, strict=True)
    ]
    return row.model_copy(
        update={"calls": calls, "schema_valid": episode_validity(verdicts) if judged else None}
    )


def case_validators(case: Case) -> ToolValidators:
    """The validators of every tool `case` offers, later turns' included."""
    return ToolValidators(_case_tools(case))


def _case_tools(case: Case) -> dict[str, Mapping[str, Any]]:
    return {tool.name: tool.parameters for tool in case.all_tools}  # with tools later turns add


def call_validities(
    row: ResultRow, validators: ToolValidators, *, reasons: bool = True
) -> list[CallValidity]:
    """Each stored call's verdict, a call whose arguments the row bound cut not judged."""
    cut = {note.field.split("]", 1)[0] + "]" for note in row.truncated if ".arguments" in note.field}
    return [
        validators.validity(
            call.name, call.arguments, parse_error=call.parse_error, cut=f"calls[{i}]" in cut, reasons=reasons
        )
        for i, call in enumerate(row.calls)
    ]


def episode_schema_valid(row: ResultRow, validators: ToolValidators, *, judged: bool = True) -> bool | None:
    """The `schema_valid` that `with_schema_validity` gives `row` (its own `schema_valid` left
    out), without the calls' reasons: what the gate's chain of custody checks a row's against."""
    if not row.calls or not judged:
        return None
    return episode_validity(call_validities(row, validators, reasons=False))


def episode_validity(calls: Sequence[CallValidity]) -> bool | None:
    """An episode's `schema_valid` from its calls' verdicts (see the module docstring)."""
    if not calls:
        return None
    if any(call.valid is False for call in calls):
        return False
    return True if all(call.valid for call in calls) else None


@lru_cache(maxsize=512)
def _validator(key: str) -> jsonschema.protocols.Validator | str:
    """The compiled validator of a schema, or why there is none (cached: a run validates
    every call of a case against the same few schemas)."""
    schema = json.loads(key)  # text json.dumps just wrote of a schema measured shallow
    if not isinstance(schema, dict):
        return "the tool's schema is not a JSON object"
    draft = schema.get("$schema")
    cls = DEFAULT_DRAFT if draft is None else None
    if isinstance(draft, str):
        cls = jsonschema.validators.validator_for(schema, default=None)
    if cls is None:
        return f"the tool's schema names a draft jsonschema does not know ($schema {_short(repr(draft))})"
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        draft_name = cls.__name__.removesuffix("Validator")
        return f"the tool's schema is not a valid {draft_name} schema ({_short(exc.message)})"
    return cls(schema)


def _nodes(value: Any) -> int:
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            count += 1
            stack.extend(item)
    return count


def _pointer(error: jsonschema.ValidationError) -> str:
    path = "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in error.absolute_path)
    return f"/{path}" if path else "(arguments)"


def _short(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


__all__ = [
    "CallValidity",
    "ToolValidators",
    "case_validators",
    "episode_schema_valid",
    "episode_validity",
    "validate_call",
    "with_schema_validity",
]
