"""Check builders: each takes a rule (and the provider's data for it) and returns a check.

A tool check looks at the whole sent tool; a node check looks at one subschema found by the
walk. Providers assemble their profiles from these in `xpeval.evals.acceptance.checker.rules.<provider>`, so a
provider's rules read as a table: which rule, which data, which evidence.
"""

from __future__ import annotations

import enum
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from xpeval.adapters.wires import ToolLayout
from xpeval.evals.acceptance.checker._types import ProviderMode, Rule, Violation, violation
from xpeval.evals.acceptance.checker.layout import layout_pointer
from xpeval.evals.acceptance.checker.meta import meta_errors
from xpeval.evals.acceptance.checker.walk import (
    Node,
    is_object_schema,
    resolve_local,
    schema_types,
    to_pointer,
    walk,
)

META_VALIDATION_MAX_DEPTH = 64
"""JSON nesting up to which `jsonschema`'s (recursive) meta-validation is safe to run."""


@dataclass(frozen=True)
class SentTool:
    """The parts of a tool definition the rules look at."""

    mode: ProviderMode
    layout: ToolLayout
    name: Any
    schema: Any
    json_depth: int

    def at(self, schema_path: Iterable[str] = ()) -> str:
        """Pointer into the definition for a path inside the schema."""
        return layout_pointer(self.layout, self.layout.schema_field) + to_pointer(schema_path)

    @property
    def name_pointer(self) -> str:
        return layout_pointer(self.layout, "name")


ToolCheck = Callable[[SentTool], Iterable[Violation]]
NodeCheck = Callable[[SentTool, Node], Iterable[Violation]]


def _context(path: Iterable[str]) -> str:
    """OpenAI's way of naming a place: `context=('properties', 'x')`."""
    return "context=(" + ", ".join(repr(t) for t in path) + ("," if len(tuple(path)) == 1 else "") + ")"


def _dict(node: Node) -> dict[str, Any] | None:
    return node.schema if isinstance(node.schema, dict) else None


# --- names -----------------------------------------------------------------------------------


def name_pattern(rule: Rule, pattern: str) -> ToolCheck:
    compiled = re.compile(pattern)

    def check(tool: SentTool) -> Iterator[Violation]:
        if not isinstance(tool.name, str) or not compiled.fullmatch(tool.name):
            yield violation(
                rule, tool.name_pointer, f"name {tool.name!r} does not match the pattern '{pattern}'", "name"
            )

    return check


def name_length(rule: Rule, max_length: int) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        if isinstance(tool.name, str) and len(tool.name) > max_length:
            yield violation(
                rule, tool.name_pointer, f"name has {len(tool.name)} characters; at most {max_length}", "name"
            )

    return check


# --- the root --------------------------------------------------------------------------------


def root_type_object(rule: Rule, *, any_case: bool = False) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        declared = tool.schema.get("type") if isinstance(tool.schema, dict) else None
        if isinstance(declared, str) and any_case:
            declared = declared.lower()
        if declared != "object":
            yield violation(
                rule, tool.at(), f"schema must be of 'type: \"object\"', got 'type: \"{declared}\"'", "type"
            )

    return check


def root_has_properties(rule: Rule) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        if isinstance(tool.schema, dict) and "properties" not in tool.schema:
            yield violation(rule, tool.at(), "object schema missing properties", "properties")

    return check


def root_keywords_absent(rule: Rule, keywords: tuple[str, ...]) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        if not isinstance(tool.schema, dict):
            return
        for keyword in keywords:
            if keyword in tool.schema:
                yield violation(
                    rule, tool.at([keyword]), f"'{keyword}' is not allowed at the top level", keyword
                )

    return check


def meta_schema(rule: Rule, *, follow_dollar_schema: bool) -> ToolCheck:
    """The schema must be a valid JSON Schema document (draft 2020-12, or the draft its
    `$schema` names when `follow_dollar_schema`)."""

    def check(tool: SentTool) -> Iterator[Violation]:
        if not isinstance(tool.schema, dict) or tool.json_depth > META_VALIDATION_MAX_DEPTH:
            return  # too deep to meta-validate safely: the checker reports the depth itself
        cls: Any = Draft202012Validator
        if follow_dollar_schema and isinstance(tool.schema.get("$schema"), str):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cls = validator_for(tool.schema, default=Draft202012Validator)
        for path, message in meta_errors(cls, tool.schema):
            keyword = next((t for t in reversed(path) if not t.isdigit()), None)
            yield violation(rule, tool.at(path), message, keyword)

    return check


# --- every node ------------------------------------------------------------------------------


def array_needs_items(rule: Rule) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        if schema is not None and "array" in schema_types(schema) and "items" not in schema:
            yield violation(
                rule, tool.at(node.path), f"In {_context(node.path)}, array schema missing items", "items"
            )

    return check


def additional_properties_false(rule: Rule) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        if (
            schema is not None
            and is_object_schema(schema)
            and schema.get("additionalProperties") is not False
        ):
            yield violation(
                rule,
                tool.at(node.path),
                f"In {_context(node.path)}, "
                "'additionalProperties' is required to be supplied and to be false",
                "additionalProperties",
            )

    return check


def required_lists_every_property(rule: Rule) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        if schema is None or not isinstance(schema.get("properties"), dict):
            return
        required = schema.get("required")
        listed = set(required) if isinstance(required, list) else set()
        missing = [key for key in schema["properties"] if key not in listed]
        if missing:
            yield violation(
                rule,
                tool.at(node.path),
                f"In {_context(node.path)}, 'required' is required to be supplied and to be an array "
                f"including every key in properties. Missing {', '.join(repr(k) for k in missing)}",
                "required",
            )

    return check


def keywords_absent(rule: Rule, keywords: tuple[str, ...], why: str = "is not permitted") -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        if schema is None:
            return
        for keyword in keywords:
            if keyword in schema:
                yield violation(rule, tool.at((*node.path, keyword)), f"'{keyword}' {why}", keyword)

    return check


def number_at_most(rule: Rule, keyword: str, limit: int) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        value = schema.get(keyword) if schema is not None else None
        if isinstance(value, int | float) and not isinstance(value, bool) and value > limit:
            yield violation(
                rule, tool.at((*node.path, keyword)), f"'{keyword}' may only be 0 to {limit}", keyword
            )

    return check


def pattern_without(rule: Rule, constructs: str, what: str) -> NodeCheck:
    forbidden = re.compile(constructs)

    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        pattern = schema.get("pattern") if schema is not None else None
        if isinstance(pattern, str) and forbidden.search(pattern):
            yield violation(
                rule, tool.at((*node.path, "pattern")), f"pattern uses {what}: {pattern!r}", "pattern"
            )

    return check


def formats_allowed(rule: Rule, allowed: Mapping[str, frozenset[str]]) -> NodeCheck:
    """`allowed` maps a type name to its formats; the key "*" applies to every type."""

    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        fmt = schema.get("format") if schema is not None else None
        if fmt is None or schema is None:
            return
        accepted = set(allowed.get("*", frozenset()))
        for type_name in schema_types(schema):
            accepted |= allowed.get(type_name.lower(), frozenset())
        if fmt not in accepted:
            yield violation(
                rule, tool.at((*node.path, "format")), f"format {fmt!r} is not supported here", "format"
            )

    return check


def any_of_first_keys_distinct(rule: Rule) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        branches = schema.get("anyOf") if schema is not None else None
        if not isinstance(branches, list):
            return
        firsts: list[str] = []
        for branch in branches:
            if (
                isinstance(branch, dict)
                and isinstance(branch.get("properties"), dict)
                and branch["properties"]
            ):
                firsts.append(next(iter(branch["properties"])))
        duplicated = sorted({key for key in firsts if firsts.count(key) > 1})
        if duplicated:
            yield violation(
                rule,
                tool.at((*node.path, "anyOf")),
                f"Objects provided via 'anyOf' must not share identical first keys ({', '.join(duplicated)})",
                "anyOf",
            )

    return check


def local_refs_only(rule: Rule) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        ref = schema.get("$ref") if schema is not None else None
        if isinstance(ref, str) and not ref.startswith("#"):
            yield violation(rule, tool.at((*node.path, "$ref")), f"external reference {ref!r}", "$ref")

    return check


def refs_resolve(rule: Rule) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        ref = schema.get("$ref") if schema is not None else None
        if isinstance(ref, str) and not resolve_local(tool.schema, ref)[0]:
            yield violation(
                rule, tool.at((*node.path, "$ref")), f"reference to undefined schema {ref!r}", "$ref"
            )

    return check


def ref_siblings_only(rule: Rule, allowed: frozenset[str], what: str) -> NodeCheck:
    def check(tool: SentTool, node: Node) -> Iterator[Violation]:
        schema = _dict(node)
        if schema is None or "$ref" not in schema:
            return
        siblings = sorted(k for k in schema if k != "$ref" and k not in allowed)
        if siblings:
            yield violation(
                rule,
                tool.at(node.path),
                f"$ref {schema['$ref']!r} was set alongside {what}: {', '.join(siblings)}",
                siblings[0],
            )

    return check


# --- whole-schema measures --------------------------------------------------------------------


def _inside(pointer: str, target: str) -> bool:
    return target == "" or pointer == target or pointer.startswith(target + "/")


def _ref_cycle(root: dict[str, Any]) -> str | None:
    """A `$ref` through which the schema refers to itself (None when it is not recursive).

    A reference is recursive when it sits inside its own target, or when its target contains
    references that lead back (a cycle in the graph target -> targets referenced inside it).
    """
    refs: list[tuple[str, str]] = [
        (node.pointer, node.schema["$ref"])
        for node in walk(root)
        if isinstance(node.schema, dict)
        and isinstance(node.schema.get("$ref"), str)
        and node.schema["$ref"].startswith("#")
    ]
    for pointer, ref in refs:
        if _inside(pointer, ref[1:]):
            return ref
    targets = {ref[1:] for _, ref in refs}
    graph = {t: {ref[1:] for pointer, ref in refs if _inside(pointer, t)} for t in targets}
    visits: dict[str, _Visit] = {}
    for start in sorted(targets):
        if start not in visits:
            target = _cycle_from(graph, start, visits)
            if target is not None:
                return "#" + target
    return None


class _Visit(enum.Enum):
    ON_PATH = "on the current path"
    DONE = "done"


def _cycle_from(graph: dict[str, set[str]], start: str, visits: dict[str, _Visit]) -> str | None:
    """Depth first from `start`: the first target met again while still on the path."""
    stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
    visits[start] = _Visit.ON_PATH
    while stack:
        current, pending = stack[-1]
        if not pending:
            visits[current] = _Visit.DONE
            stack.pop()
            continue
        nxt = pending.pop()
        if visits.get(nxt) is _Visit.ON_PATH:
            return nxt
        if nxt not in visits:
            visits[nxt] = _Visit.ON_PATH
            stack.append((nxt, sorted(graph.get(nxt, ()))))
    return None


def not_recursive(rule: Rule) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        if isinstance(tool.schema, dict):
            ref = _ref_cycle(tool.schema)
            if ref is not None:
                yield violation(rule, tool.at(), f"recursive schema (through $ref {ref!r})", "$ref")

    return check


def optional_properties_at_most(rule: Rule, limit: int) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        optional = 0
        for node in walk(tool.schema):
            schema = node.schema
            if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
                required = schema.get("required")
                listed = set(required) if isinstance(required, list) else set()
                optional += sum(1 for key in schema["properties"] if key not in listed)
        if optional > limit:
            yield violation(
                rule, tool.at(), f"{optional} optional properties against a limit of {limit}", "required"
            )

    return check


@dataclass(frozen=True)
class SizeLimits:
    max_object_depth: int
    max_properties: int
    max_enum_values: int
    max_total_chars: int
    large_string_enum: int
    """A string enum with more values than this ..."""
    large_string_enum_chars: int
    """... may have at most this many characters in total."""


def size_limits(rule: Rule, limits: SizeLimits) -> ToolCheck:
    def check(tool: SentTool) -> Iterator[Violation]:
        if not isinstance(tool.schema, dict):
            return
        deepest = 0
        properties = enum_values = chars = 0
        for node in walk(tool.schema):
            schema = node.schema
            if not isinstance(schema, dict):
                continue
            deepest = max(deepest, node.object_depth)
            if isinstance(schema.get("properties"), dict):
                properties += len(schema["properties"])
                chars += sum(len(str(key)) for key in schema["properties"])
            enum = schema.get("enum")
            if isinstance(enum, list):
                enum_values += len(enum)
                enum_chars = sum(len(v) for v in enum if isinstance(v, str))
                chars += enum_chars
                if len(enum) > limits.large_string_enum and enum_chars > limits.large_string_enum_chars:
                    yield violation(
                        rule,
                        tool.at((*node.path, "enum")),
                        f"a string enum of {len(enum)} values has {enum_chars} characters; "
                        f"at most {limits.large_string_enum_chars}",
                        "enum",
                    )
            if isinstance(schema.get("const"), str):
                chars += len(schema["const"])
        if deepest > limits.max_object_depth:
            yield violation(
                rule,
                tool.at(),
                f"{deepest} levels of nesting exceeds limit of {limits.max_object_depth}",
                None,
            )
        for measured, limit, what, keyword in (
            (properties, limits.max_properties, "object properties", "properties"),
            (enum_values, limits.max_enum_values, "enum values", "enum"),
            (chars, limits.max_total_chars, "characters of property names and enum/const values", None),
        ):
            if measured > limit:
                yield violation(rule, tool.at(), f"{measured} {what} exceeds limit of {limit}", keyword)

    return check


@dataclass(frozen=True)
class Profile:
    """Everything one provider mode checks. Name checks run on any definition; the schema
    checks only on a schema shallow enough to judge (see `checker.checking`)."""

    name_checks: tuple[ToolCheck, ...]
    tool_checks: tuple[ToolCheck, ...]
    node_checks: tuple[NodeCheck, ...]
