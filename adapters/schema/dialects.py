"""The schema dialects a registry entry can name: the built-in ones and those plugins add.

A dialect is four facts: the pass that rewrites a tool's schema (`Rules`), the tool names its
provider accepts (`NameRule`), how many tools one request may carry and the `strict` flag its
tools are sent with. `register_dialect` adds one (`xpeval.plugin.register_wire` calls it for a
plugin wire's dialects), validated before it becomes visible; a name that is taken stays taken.
docs/plugin-api.md describes each field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from xpeval.adapters.schema import apply, names, prepare
from xpeval.adapters.schema._rules import Rules
from xpeval.adapters.schema._types import DIALECTS
from xpeval.adapters.schema.names import NameRule
from xpeval.errors import DialectError

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


@dataclass(frozen=True)
class DialectSpec:
    """A schema dialect a plugin adds."""

    name: str
    """What a `DirectEntry`/`WrapperEntry` names as its `schema_dialect` (lower case, digits,
    '.', '_', '-')."""
    rules: Rules
    """The pass: a `Rules` instance (`xpeval.plugin.SchemaRules` or one of the built-in dialects'
    rules it exports, subclassed where the provider differs)."""
    tool_names: NameRule
    """The tool names the provider accepts; others are renamed reversibly."""
    max_tools: int | None = None
    """Tools one request may carry (None: no documented limit)."""
    strict: bool | None = None
    """The `strict` flag its tools are sent with (None: the wire sends none)."""


def registered_dialects() -> tuple[str, ...]:
    """Every dialect an entry can name: the built-in ones, then those registered."""
    return tuple(apply.RULES)


def is_dialect(name: object) -> bool:
    return isinstance(name, str) and name in apply.RULES


def register_dialect(spec: DialectSpec) -> None:
    """Make `spec` a dialect entries can name; `DialectError` (one line) when it cannot be."""
    problem = dialect_problem(spec)
    if problem is not None:
        raise DialectError(problem)
    apply.RULES[spec.name] = spec.rules
    names.NAME_RULES[spec.name] = spec.tool_names
    if spec.max_tools is not None:
        prepare.TOOL_CAPS[spec.name] = spec.max_tools
    if spec.strict is not None:
        prepare.STRICT[spec.name] = spec.strict


def unregister_dialect(name: str) -> None:
    """Remove a plugin's dialect (tests); the built-in ones stay."""
    if name in DIALECTS:
        raise DialectError(f"dialect {name} is built in; it cannot be unregistered")
    for table in _tables():
        table.pop(name, None)


def dialect_problem(spec: object) -> str | None:
    """What is wrong with `spec` as a dialect to register, or None."""
    if not isinstance(spec, DialectSpec):
        return f"a dialect must be a DialectSpec, not a {type(spec).__name__}"
    if not isinstance(spec.name, str) or not _NAME.fullmatch(spec.name):
        return f"invalid dialect name {spec.name!r} (lower-case letters, digits, '.', '_' and '-')"
    if spec.name in apply.RULES:
        return f"dialect {spec.name} is already registered"
    if not isinstance(spec.rules, Rules):
        return f"dialect {spec.name}: rules must be a SchemaRules instance, not a {type(spec.rules).__name__}"
    if not isinstance(spec.tool_names, NameRule):
        return f"dialect {spec.name}: tool_names must be a NameRule, not a {type(spec.tool_names).__name__}"
    if spec.max_tools is not None and (
        not isinstance(spec.max_tools, int) or isinstance(spec.max_tools, bool) or spec.max_tools < 1
    ):
        return f"dialect {spec.name}: max_tools must be a positive int or None"
    if spec.strict is not None and not isinstance(spec.strict, bool):
        return f"dialect {spec.name}: strict must be True, False or None"
    return None


def _tables() -> tuple[dict[str, Any], ...]:
    return (apply.RULES, names.NAME_RULES, prepare.TOOL_CAPS, prepare.STRICT)


def snapshot() -> tuple[dict[str, Any], ...]:
    """The dialect tables as they are (a plugin's import must leave them so)."""
    return tuple(dict(table) for table in _tables())


def restore(saved: tuple[dict[str, Any], ...]) -> None:
    """Put the dialect tables back as `snapshot` found them."""
    for table, items in zip(_tables(), saved, strict=True):
        table.clear()
        table.update(items)
