"""How much a schema rewrite changed a tool's contract, measured on generated instances.

Instances generated (hypothesis-jsonschema) from the original schema must validate against the
rewritten one: each failure is a false rejection the rewrite introduced (a call the tool accepts
that the provider would now refuse to produce). Instances generated from the rewritten schema
are checked against the original: the share the original forbids is the constraint-loss rate
(calls the provider may now produce that the tool never accepted). Instances are tool
arguments, so always JSON objects (`as_arguments`).

Reproducible: each schema's seed is derived from its content, and the example budget is fixed;
a per-schema time budget may stop generation early (the counts say how many were drawn).
Schemas hypothesis-jsonschema cannot handle (recursive references, unsatisfiable, too deep or
too large) give `loss_rate = None` with the reason, never an exception.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import HypothesisException
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, UnknownType, ValidationError
from jsonschema.validators import extend, validator_for
from pydantic import BaseModel
from referencing.exceptions import Unresolvable

from xpeval.adapters.schema.openapi import as_json_schema as openapi_as_json_schema
from xpeval.evals.acceptance.checker.walk import json_depth, to_pointer, walk

Semantics = Literal["json-schema", "openapi-3.0"]
"""How to read a rewritten schema: JSON Schema, or Gemini `parameters` (OpenAPI 3.0 subset:
upper-case types, `nullable`)."""

DEFAULT_EXAMPLES = 20
DEFAULT_SECONDS = 0.3
"""Per draw. Checked between examples, so one slow example may overrun it, up to HARD_SECONDS."""
HARD_SECONDS = 5.0
"""Per draw, enforced by a timer where one can be set (the main thread with no timer of its own
running): hypothesis-jsonschema can spend minutes filtering a schema it can barely satisfy."""
MAX_JSON_DEPTH = 48
"""Generation and validation recurse; past this nesting the measurement is refused."""
MAX_SUBSCHEMAS = 2_000


class FidelityResult(BaseModel):
    """The measurement for one (original, rewritten) pair."""

    loss_rate: float | None
    """Share of instances of the rewritten schema that the original forbids; None: unmeasured."""
    false_rejections: int
    """Instances of the original schema that the rewritten schema refuses (after the adapter's
    argument mapping), and that no reported narrowing explains."""
    narrowed: int = 0
    """Instances of the original the rewritten schema refuses only because of a narrowing the
    adapter reported (an open object it closed): the call cannot be made, and the losses say so."""
    from_original: int = 0
    from_rewritten: int = 0
    reason: str | None = None
    """Why (part of) the measurement could not be made."""


class Unmeasurable(Exception):
    """A schema the generator or the validator cannot handle; the message is the reason."""


class _OutOfTime(BaseException):  # not an Exception: hypothesis stops at once, no replay
    pass


def content_seed(schema: Any) -> int:
    """A seed derived from the schema's content (canonical JSON), so a rerun draws the same."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:8], "big")


def _guard(schema: Any, what: str) -> None:
    if not isinstance(schema, dict | bool):
        raise Unmeasurable(f"the {what} schema is not a JSON Schema object")
    depth = json_depth(schema, MAX_JSON_DEPTH)
    if depth > MAX_JSON_DEPTH:
        raise Unmeasurable(f"the {what} schema nests deeper than {MAX_JSON_DEPTH} levels")
    for count, _ in enumerate(walk(schema)):
        if count > MAX_SUBSCHEMAS:
            raise Unmeasurable(f"the {what} schema has more than {MAX_SUBSCHEMAS} subschemas")


def draw_instances(schema: Any, examples: int, seconds: float) -> list[Any]:
    """Up to `examples` instances of `schema`, drawn with a seed derived from its content and
    stopped after `seconds`. Raises `Unmeasurable` with the reason when nothing can be drawn."""
    _guard(schema, "generated")
    from hypothesis_jsonschema import from_schema

    drawn: list[Any] = []
    deadline = time.monotonic() + seconds
    try:
        with _hard_limit(max(HARD_SECONDS, seconds)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # hypothesis-jsonschema canonicalises the schema it is given in place.
            strategy = from_schema(copy.deepcopy(schema))

            @hypothesis_seed(content_seed(schema))
            @settings(
                max_examples=examples,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
                verbosity=Verbosity.quiet,
            )
            @given(strategy)
            def collect(instance: Any) -> None:
                if drawn and time.monotonic() > deadline:  # at least one, however slow
                    raise _OutOfTime
                drawn.append(instance)

            collect()
    except _OutOfTime:
        pass  # what was drawn in time is the sample
    except RecursionError as exc:
        raise Unmeasurable("hypothesis-jsonschema recursed too deep on this schema") from exc
    except (HypothesisException, SchemaError, Unresolvable) as exc:
        raise Unmeasurable(
            f"hypothesis-jsonschema cannot generate from this schema: {_first_line(exc)}"
        ) from exc
    except Exception as exc:  # the generator's own failures on odd schemas must not end the run
        raise Unmeasurable(
            f"hypothesis-jsonschema failed ({type(exc).__name__}: {_first_line(exc)})"
        ) from exc
    if not drawn:
        raise Unmeasurable(f"no instance could be generated within {max(HARD_SECONDS, seconds):g}s")
    return drawn[:examples]


@contextlib.contextmanager
def _hard_limit(seconds: float) -> Iterator[None]:
    """Raise `_OutOfTime` inside whatever runs after `seconds` (SIGALRM). A no-op off the main
    thread, where there is no SIGALRM, or when a timer is already set (pytest-timeout's, say):
    it is left alone."""
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )
    if not usable:
        yield
        return

    def out_of_time(signum: int, frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, out_of_time)
    # Repeating: an exception raised where Python ignores it (a weakref callback during garbage
    # collection) is lost, so the timer fires again until one lands.
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _validator(schema: Any) -> Any:
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls: Any = (
            validator_for(schema, default=Draft202012Validator) if isinstance(declared, str) else _Undeclared
        )
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _draft4_exclusive(keyword: str, bound: str, above: bool) -> Any:
    """`keyword` as 2020-12 reads a number, and as draft-04 reads a boolean: `true` makes `bound`
    exclusive. The passes read a boolean bound so (`adapters/schema/_wellformed.py` writes the
    draft-04 form in 2020-12); 2020-12 would take `true` for the number 1 and judge the original
    by a bound nobody wrote."""
    number_form = Draft202012Validator.VALIDATORS[keyword]

    def check(validator: Any, value: Any, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
        if not isinstance(value, bool):
            yield from number_form(validator, value, instance, schema)
            return
        limit = schema.get(bound)
        if not value or not validator.is_type(instance, "number") or not validator.is_type(limit, "number"):
            return
        if (instance <= limit) if above else (instance >= limit):
            yield ValidationError(
                f"{instance!r} is not {'above' if above else 'below'} {limit!r} (draft-04 {keyword})"
            )

    return check


_Undeclared: Any = extend(
    Draft202012Validator,
    {
        "exclusiveMinimum": _draft4_exclusive("exclusiveMinimum", "minimum", above=True),
        "exclusiveMaximum": _draft4_exclusive("exclusiveMaximum", "maximum", above=False),
    },
)
"""A schema that declares no `$schema`: 2020-12, with draft-04's boolean exclusive bounds."""


ArgumentMapping = Callable[[Any], Any]
"""How an adapter maps one call's arguments between the original and the rewritten schema."""


@dataclass(frozen=True)
class ArgumentMappings:
    """The adapter's own argument mappings, so that a difference the adapter undoes at run time
    (a null it turns back into an omitted field) is not counted against it.

    `to_wire` is what a model under the rewritten schema sends for an original call, without
    leaving anything out; `narrowing_to_wire` may also leave out what the adapter reported
    narrowing (undeclared keys of objects it closed); `from_wire` maps a sent call back.
    """

    to_wire: ArgumentMapping | None = None
    narrowing_to_wire: ArgumentMapping | None = None
    from_wire: ArgumentMapping | None = None
    narrowed_types: frozenset[str] = frozenset()
    """Pointers (rewritten schema) of nodes the adapter reported narrowing to one type: a value
    of another type there is refused by that reported narrowing, not falsely."""


@dataclass
class _Judge:
    validator: Any
    problems: list[str] = field(default_factory=list)

    def _map(self, instance: Any, mapping: ArgumentMapping | None) -> tuple[bool, Any]:
        """(mapped, instance): the adapter's mapping failing is a finding, not a crash."""
        if mapping is None or not isinstance(instance, dict):
            return True, instance
        try:
            return True, mapping(instance)
        except Exception as exc:
            self.problems.append(f"argument mapping raised {type(exc).__name__}: {_first_line(exc)}")
            return False, instance

    def accepts(self, instance: Any, mapping: ArgumentMapping | None = None) -> bool:
        mapped, instance = self._map(instance, mapping)
        if not mapped:
            return False
        try:
            return bool(self.validator.is_valid(instance))
        except RecursionError as exc:
            raise Unmeasurable("validation recursed too deep") from exc
        except (Unresolvable, SchemaError, UnknownType) as exc:
            raise Unmeasurable(f"the schema cannot be used for validation: {_first_line(exc)}") from exc

    def refused_only_by_type_at(
        self, instance: Any, mapping: ArgumentMapping | None, pointers: frozenset[str]
    ) -> bool:
        """Whether every reason the mapped `instance` is refused is a `type` keyword of a node at
        `pointers` (an error below a `$ref` or inside a union cannot be placed: it does not count)."""
        if not pointers:
            return False
        mapped, instance = self._map(instance, mapping)
        if not mapped:
            return False
        try:
            errors = list(self.validator.iter_errors(instance))
        except (RecursionError, Unresolvable, SchemaError, UnknownType):
            return False
        return bool(errors) and all(
            error.validator == "type"
            and "$ref" not in error.absolute_schema_path
            and to_pointer(list(error.absolute_schema_path)[:-1]) in pointers
            for error in errors
        )


def as_arguments(schema: Any) -> Any:
    """The part of `schema` a tool call can carry: every wire sends arguments as a JSON object, so
    instances are generated as objects (a root that admits other types is restricted to object;
    `$ref`s stay valid because the root stays the root)."""
    if schema is True or schema == {}:
        return {"type": "object"}
    if not isinstance(schema, dict):
        return schema
    declared = schema.get("type")
    if declared is None or (isinstance(declared, list) and "object" in declared):
        return {**schema, "type": "object"}
    return schema


def _own(instances: list[Any], judge: _Judge, side: str) -> list[Any]:
    """The instances their own schema accepts: hypothesis-jsonschema generates arbitrary strings
    for formats it does not know ("uuid"), which the format-checking validator then refuses."""
    valid = [instance for instance in instances if judge.accepts(instance)]
    if not valid:
        raise Unmeasurable(
            f"none of the {len(instances)} generated instances satisfies the {side} schema itself"
        )
    return valid


def measure_fidelity(
    original: Any,
    rewritten: Any,
    *,
    semantics: Semantics = "json-schema",
    mappings: ArgumentMappings | None = None,
    examples: int = DEFAULT_EXAMPLES,
    seconds: float = DEFAULT_SECONDS,
    draw: Callable[[Any, int, float], list[Any]] = draw_instances,
) -> FidelityResult:
    """False rejections and constraint-loss rate of `rewritten` against `original`.

    `mappings` are the adapter's argument mappings (none: arguments go through unchanged);
    `draw` lets a caller share generated instances between pairs (`InstanceCache.draw`).
    """
    maps = mappings or ArgumentMappings()
    if semantics == "json-schema" and original == rewritten:
        return FidelityResult(loss_rate=0.0, false_rejections=0)
    try:
        _guard(original, "original")
        _guard(rewritten, "rewritten")
        rewritten_js = rewritten if semantics == "json-schema" else openapi_as_json_schema(rewritten)
        to_rewritten = _Judge(_validator(rewritten_js))
        to_original = _Judge(_validator(original))
    except Unmeasurable as exc:
        return FidelityResult(loss_rate=None, false_rejections=0, reason=str(exc))
    reasons: list[str] = []
    false_rejections = narrowed = drawn_original = 0
    try:
        from_original = _own(draw(as_arguments(original), examples, seconds), to_original, "original")
        drawn_original = len(from_original)
        for instance in from_original:
            if to_rewritten.accepts(instance, maps.to_wire):
                continue
            closed_only = maps.narrowing_to_wire is not None and to_rewritten.accepts(
                instance, maps.narrowing_to_wire
            )
            if closed_only or to_rewritten.refused_only_by_type_at(
                instance, maps.narrowing_to_wire or maps.to_wire, maps.narrowed_types
            ):
                narrowed += 1
            else:
                false_rejections += 1
    except Unmeasurable as exc:
        reasons.append(f"original: {exc}")
    loss_rate: float | None = None
    drawn_rewritten = 0
    try:
        from_rewritten = _own(draw(as_arguments(rewritten_js), examples, seconds), to_rewritten, "rewritten")
        drawn_rewritten = len(from_rewritten)
        lost = sum(1 for instance in from_rewritten if not to_original.accepts(instance, maps.from_wire))
        loss_rate = lost / drawn_rewritten
    except Unmeasurable as exc:
        reasons.append(f"rewritten: {exc}")
    reasons.extend(sorted(set(to_rewritten.problems + to_original.problems)))
    return FidelityResult(
        loss_rate=loss_rate,
        false_rejections=false_rejections,
        narrowed=narrowed,
        from_original=drawn_original,
        from_rewritten=drawn_rewritten,
        reason="; ".join(reasons) or None,
    )


class InstanceCache:
    """Memoizes `draw_instances` by schema content, so every adapter that sends the same schema
    (or measures the same original) shares one generation."""

    def __init__(self) -> None:
        self._drawn: dict[tuple[str, int, float], list[Any] | str] = {}

    def draw(self, schema: Any, examples: int, seconds: float) -> list[Any]:
        _guard(schema, "generated")
        key = (json.dumps(schema, sort_keys=True, default=str), examples, seconds)
        if key not in self._drawn:
            try:
                self._drawn[key] = draw_instances(schema, examples, seconds)
            except Unmeasurable as exc:
                self._drawn[key] = str(exc)
        found = self._drawn[key]
        if isinstance(found, str):
            raise Unmeasurable(found)
        return found
