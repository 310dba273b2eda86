"""Tool names each provider accepts, and a reversible mapping for the others.

Rules (docs/provider-schema-rules.md §1, §4, §6, §8, §13.1), each the conservative reading where the
sources differ:
- OpenAI (and Azure, Mistral): `^[a-zA-Z0-9_-]{1,64}$`.
- Anthropic: `^[a-zA-Z0-9_-]{1,64}$` (128 since 2026, but 64 where names are echoed in results).
- Gemini: starts with a letter or underscore; letters, digits, `_`, `.`, `-`; at most 64 (`:`
  was added in late 2025 and is left out here).
- Moonshot (OpenAI wire): the OpenAI rule, and no leading digit.

A name that breaks its rule is mapped deterministically: disallowed characters become `_`, a
bad first character gets a `t_` prefix, and a name still too long or taken gets a short hash of
the original appended. Names that already fit keep themselves; the mapping is collision-free
within one request and `PreparedTools.restore` maps a decoded call back.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from xpeval.adapters.schema._types import Dialect


@dataclass(frozen=True)
class NameRule:
    pattern: re.Pattern[str]
    disallowed: re.Pattern[str]
    first: re.Pattern[str]
    max_length: int
    text: str


_OPENAI = NameRule(
    re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    re.compile(r"[^a-zA-Z0-9_-]"),
    re.compile(r"[a-zA-Z0-9_-]"),
    64,
    "^[a-zA-Z0-9_-]{1,64}$",
)
_MOONSHOT = NameRule(
    re.compile(r"[a-zA-Z_-][a-zA-Z0-9_-]{0,63}"),
    re.compile(r"[^a-zA-Z0-9_-]"),
    re.compile(r"[a-zA-Z_-]"),
    64,
    "^[a-zA-Z0-9_-]{1,64}$, not starting with a digit",
)
_GEMINI = NameRule(
    re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}"),
    re.compile(r"[^a-zA-Z0-9_.-]"),
    re.compile(r"[a-zA-Z_]"),
    64,
    "a letter or underscore, then letters, digits, '_', '.', '-'; at most 64",
)

NAME_RULES: dict[Dialect, NameRule] = {
    "openai": _OPENAI,
    "openai-strict": _OPENAI,
    "anthropic": _OPENAI,
    "anthropic-strict": _OPENAI,
    "gemini-openapi": _GEMINI,
    "gemini-json-schema": _GEMINI,
    "moonshot": _MOONSHOT,
}


@dataclass(frozen=True)
class NameMapping:
    wire: dict[str, str]
    """original name -> name sent (only for names kept in the request)."""
    duplicates: frozenset[int]
    """Indices of tools whose name repeats an earlier tool's (refused)."""


def _digest(name: str, length: int = 8) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:length]


def map_names(dialect: Dialect, names: list[str]) -> NameMapping:
    """Provider names for the tools of one request (see the module docstring)."""
    rule = NAME_RULES[dialect]
    seen: set[str] = set()
    duplicates: set[int] = set()
    unique: list[str] = []
    for index, name in enumerate(names):
        if name in seen:
            duplicates.add(index)
        else:
            seen.add(name)
            unique.append(name)
    wire: dict[str, str] = {}
    taken: set[str] = set()
    for name in unique:
        if rule.pattern.fullmatch(name):
            wire[name] = name
            taken.add(name)
    for name in sorted(n for n in unique if n not in wire):
        candidate = rule.disallowed.sub("_", name)
        if not candidate or not rule.first.match(candidate):
            candidate = "t_" + candidate
        if len(candidate) > rule.max_length or candidate in taken:
            size = 8
            while True:
                suffix = "_" + _digest(name, size)
                candidate = candidate[: rule.max_length - len(suffix)] + suffix
                if candidate not in taken:
                    break
                size += 4
        wire[name] = candidate
        taken.add(candidate)
    return NameMapping(wire=wire, duplicates=frozenset(duplicates))
