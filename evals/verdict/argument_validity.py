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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    if parse_error is not None:
        return CallValidity(False, f"{name}: arguments are not a JSON object ({parse_error})")
    schema = tools.get(name)
    if schema is None:
        return CallValidity(False, f"{name}: no tool of that name was offered")
    if cut:
        return CallValidity(None, f"{name}: arguments cut to the row bound (4 KB): not judged")
    if nesting_depth(arguments) > MAX_DEPTH:
        return CallValidity(None, f"{name}: arguments nest deeper than {MAX_DEPTH} levels: not judged")
    if nesting_depth(schema) > MAX_DEPTH or _nodes(schema) > MAX_SCHEMA_NODES:
        reason = (
            f"the tool's schema nests deeper than {MAX_DEPTH} levels or has over {MAX_SCHEMA_NODES} nodes"
        )
        return CallValidity(None, f"{name}: {reason}: not judged")
    validator = _validator(json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str))
    if isinstance(validator, str):
        return CallValidity(None, f"{name}: {validator}: not judged")
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(dict(arguments)))
    except (referencing.exceptions.Unresolvable, RecursionError) as exc:
        return CallValidity(None, f"{name}: the schema cannot be applied ({type(exc).__name__}): not judged")
    if error is None:
        return VALID
    return CallValidity(False, f"{name}: {_pointer(error)}: {_short(error.message)}")


def with_schema_validity(row: ResultRow, case: Case, *, judged: bool = True) -> ResultRow:
    """The row with each stored call's verdict and the episode's `schema_valid`, judged from
    what the row keeps (so anyone can judge it again from the results file); `judged=False`
    (an episode that ended in an error) leaves the episode unjudged, its calls still judged."""
    if not row.calls:
        return row
    tools = {tool.name: tool.parameters for tool in case.all_tools}  # with tools later turns add
    cut = {note.field.split("]", 1)[0] + "]" for note in row.truncated if ".arguments" in note.field}
    verdicts = [
        validate_call(
            tools, call.name, call.arguments, parse_error=call.parse_error, cut=f"calls[{i}]" in cut
        )
        for i, call in enumerate(row.calls)
    ]
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


__all__ = ["CallValidity", "episode_validity", "validate_call", "with_schema_validity"]
