"""Meta-validation: the (path, message) of every error `jsonschema` finds in a schema against its
draft's meta-schema, computed once per distinct document and, for draft 2020-12, once per
distinct keyword value and subschema.

It was the checker's costliest step (on 10,000 tools, `benchmarks/schemas_at_scale.py`), and a
catalog repeats itself: every adapter that sends a tool unchanged checks the same document, and
tools share their argument shapes. The memos are bounded and keyed by `repr`, which keeps key
order (the order errors come in) and tells `1` from `1.0` from `True` and a list from a tuple, as
the meta-schema does:

- the whole document: equal documents get the same errors;
- under 2020-12, what the meta-schema's `properties` keyword checks: each keyword's value of a
  schema node against that keyword's meta-schema (the 2020-12 meta-schemas relate no keyword of
  a node to another: a node's errors are those of its keywords' values, each checked alone), and
  each subschema reached through `$dynamicRef: "#meta"` (every applicator: `properties`, `items`,
  `anyOf`, `$defs`, ...). That reference always resolves to the outermost resource with the
  `meta` dynamic anchor, the 2020-12 meta-schema the validation started from, so none of these
  errors depends on where the value sits: each is computed once and replayed, as fresh copies
  (the callers prepend their own paths to what they are given).

`tests/acceptance/test_checker.py` compares the errors with plain `jsonschema`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend

MetaErrors = tuple[tuple[list[str], str], ...]

MEMO_SIZE = 4096
"""Documents remembered; keyword values and subschemas: four times as many."""

_documents: dict[tuple[Any, str], MetaErrors] = {}
_parts: dict[tuple[Any, ...], tuple[ValidationError, ...]] = {}
_validators: dict[Any, Any] = {}
_resolved: dict[tuple[int, str], Any] = {}


def meta_errors(cls: Any, schema: dict[str, Any]) -> MetaErrors:
    """(instance path, message) of every error of `schema` against `cls`'s meta-schema, in the
    order `cls(cls.META_SCHEMA).iter_errors(schema)` yields them."""
    key = (cls, repr(schema))
    known = _documents.get(key)
    if known is not None:
        return known
    validator = _validators.get(cls)
    if validator is None:
        validating = _Memoized if cls is Draft202012Validator else cls
        validator = _validators[cls] = validating(cls.META_SCHEMA)
    errors = tuple(
        ([str(token) for token in error.absolute_path], error.message)
        for error in validator.iter_errors(schema)
    )
    _remember(_documents, key, errors, MEMO_SIZE)
    return errors


def _remember(memo: dict[Any, Any], key: Any, value: Any, size: int) -> None:
    if len(memo) >= size:
        memo.pop(next(iter(memo)))  # the oldest: a catalog's repeats come close together
    memo[key] = value


def _replayed(
    key: tuple[Any, ...], errors: Callable[[], Iterable[ValidationError]]
) -> Iterator[ValidationError]:
    known = _parts.get(key)
    if known is None:
        known = tuple(_copy(error) for error in errors())
        _remember(_parts, key, known, 4 * MEMO_SIZE)
    for error in known:
        yield _copy(error)


def _dynamic_ref(validator: Any, ref: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`$dynamicRef` as `jsonschema` runs it, a `#meta` subschema's errors remembered."""
    if ref != "#meta" or not isinstance(instance, dict):
        yield from validator._validate_reference(ref=ref, instance=instance)
        return
    yield from _replayed(
        (ref, repr(instance)), lambda: validator._validate_reference(ref=ref, instance=instance)
    )


def _ref(validator: Any, ref: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`$ref` as `jsonschema` runs it (`_validate_reference`), each of the meta-schema's own
    references resolved once (`schema` is a meta-schema node: its base URI never changes, and
    the only dynamic reference, `#meta`, resolves to the same outermost resource from any scope)."""
    key = (id(schema), ref)
    resolved = _resolved.get(key)
    if resolved is None:
        resolved = _resolved[key] = validator._resolver.lookup(ref)
    yield from validator.descend(instance, resolved.contents, resolver=resolved.resolver)


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """`properties` as `jsonschema` runs it (`_keywords.properties`), each value's errors against
    its meta-schema remembered (`subschema` is a node of a meta-schema document, which lives as
    long as the process)."""
    if not validator.is_type(instance, "object"):
        return
    for name, subschema in properties.items():
        if name in instance:
            value = instance[name]
            yield from _replayed(
                (id(subschema), name, repr(value)),
                lambda: validator.descend(value, subschema, path=name, schema_path=name),  # noqa: B023
            )


def _copy(error: ValidationError) -> ValidationError:
    """`error` with its own paths (the caller's `descend` prepends to them)."""
    return ValidationError(
        error.message,
        validator=error.validator,
        path=error.relative_path,
        cause=error.cause,
        context=error.context,
        validator_value=error.validator_value,
        instance=error.instance,
        schema=error.schema,
        schema_path=error.relative_schema_path,
        type_checker=error._type_checker,
    )


_Memoized: Any = extend(
    Draft202012Validator, validators={"$dynamicRef": _dynamic_ref, "$ref": _ref, "properties": _properties}
)
_FIELDS = [(field.name, field.alias) for field in attrs.fields(_Memoized) if field.init]


def _evolve(self: Any, **changes: Any) -> Any:
    """`Validator.evolve` keeping this class. jsonschema's picks the class from the `$schema` of
    the schema it descends into, which for the meta-schema's own documents is always 2020-12:
    its plain class, without the memos."""
    changes.setdefault("schema", self.schema)
    for name, alias in _FIELDS:
        changes.setdefault(alias, getattr(self, name))
    return _Memoized(**changes)


_Memoized.evolve = _evolve
