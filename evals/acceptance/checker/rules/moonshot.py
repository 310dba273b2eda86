"""Moonshot / Kimi: "Moonshot-flavoured JSON Schema" on the Chat Completions wire
(docs/provider-schema-rules.md §8).

Every refusal reads `tools.function.parameters is not a valid moonshot flavored json schema,
details: <At path '<path>': <reason>>`; the messages below reuse the provider's reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from xpeval.evals.acceptance.checker import keywords
from xpeval.evals.acceptance.checker._types import ProviderMode, Rule, Violation, violation
from xpeval.evals.acceptance.checker.keywords import Profile, SentTool
from xpeval.evals.acceptance.checker.walk import Node, resolve_local

NAME_DIGIT = Rule(
    "moonshot.name-leading-digit",
    "Tool names must not start with a digit.",
    "[err, behaviour] github.com/MoonshotAI/kimi-cli/issues/2531",
)
ROOT_OBJECT = Rule(
    "moonshot.root-type-object",
    'tools.function.parameters.type is required and must be "object".',
    "[err] github.com/14790897/MiqroForge-Desktop/issues/1165 (2026-09)",
)
TYPE_DEFINED = Rule(
    "moonshot.type-not-defined",
    "Every schema node declares a type (anyOf nodes declare it in each branch, $ref nodes in the target).",
    "[err] github.com/earendil-works/pi/issues/4138 (2026-05)",
)
ANY_OF_PARENT_TYPE = Rule(
    "moonshot.any-of-parent-type",
    "When using anyOf, type is defined in the anyOf items instead of the parent schema.",
    "[err] github.com/MoonshotAI/kimi-cli/issues/2531; github.com/FTShare-Lab/FTShare-MCP/issues/7; "
    "github.com/openJiuwen-ai/jiuwenswarm/issues/3942",
)
REF_TYPE = Rule(
    "moonshot.ref-with-type",
    "When using $ref, type is defined in the referenced schema instead of the parent schema.",
    "[err] github.com/router-for-me/CLIProxyAPI/issues/5316 (2026-08)",
)
REF_SIBLINGS = Rule(
    "moonshot.ref-with-siblings",
    "A $ref must stand alone: sibling keywords conflict after $ref expansion (even description).",
    "[err] github.com/MoonshotAI/kimi-cli/issues/2061 (2026-04); "
    "docs/provider-schema-rules.md §8 (every sibling counts as a conflict)",
)
REF_ROOT_DEFS = Rule(
    "moonshot.ref-root-defs",
    "References point into the root $defs (#/$defs/<name>) and resolve there.",
    "[err] github.com/CommandCodeAI/command-code/issues/566 (2026-07); "
    "github.com/anomalyco/opencode/issues/27054",
)
REF_STRING = Rule(
    "moonshot.ref-must-be-string",
    "$ref must be a string (a property literally named $ref breaks the validator).",
    "[err] github.com/pydantic/logfire/issues/2191 (2026-08)",
)

_ROOT_DEF_REF = re.compile(r"#/\$defs/[^/]+")


def _types(tool: SentTool, node: Node) -> Iterator[Violation]:
    schema = node.schema
    if not isinstance(schema, dict):
        return
    has_type = "type" in schema
    at = tool.at(node.path)
    if "$ref" in schema:
        if has_type:
            yield violation(
                REF_TYPE,
                at,
                "when using $ref, type should be defined in the referenced schema instead of "
                "the parent schema",
                "type",
            )
    elif "anyOf" in schema:
        if has_type:
            yield violation(
                ANY_OF_PARENT_TYPE,
                at,
                "when using anyOf, type should be defined in anyOf items instead of the parent schema",
                "type",
            )
    elif not has_type and node.path:  # the root has its own rule
        yield violation(TYPE_DEFINED, at, "type is not defined", "type")


def _refs(tool: SentTool, node: Node) -> Iterator[Violation]:
    schema = node.schema
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if isinstance(properties, dict) and "$ref" in properties and not isinstance(properties["$ref"], str):
        yield violation(
            REF_STRING, tool.at((*node.path, "properties", "$ref")), "$ref must be a string", "$ref"
        )
    if "$ref" not in schema:
        return
    ref = schema["$ref"]
    at = tool.at((*node.path, "$ref"))
    if not isinstance(ref, str):
        yield violation(REF_STRING, at, "$ref must be a string", "$ref")
        return
    if not _ROOT_DEF_REF.fullmatch(ref) or not resolve_local(tool.schema, ref)[0]:
        yield violation(REF_ROOT_DEFS, at, f"$defs not found for reference: {ref}", "$ref")
    siblings = sorted(k for k in schema if k not in ("$ref", "type"))
    if siblings:
        yield violation(
            REF_SIBLINGS,
            tool.at(node.path),
            f"conflicting keywords found after $ref expansion: {', '.join(siblings)}",
            siblings[0],
        )


def _name(tool: SentTool) -> Iterator[Violation]:
    if not isinstance(tool.name, str) or not tool.name or tool.name[0].isdigit():
        yield violation(
            NAME_DIGIT, tool.name_pointer, f"tool name {tool.name!r} must not start with a digit", "name"
        )


PROFILES: dict[ProviderMode, Profile] = {
    "moonshot": Profile(
        name_checks=(_name,),
        tool_checks=(keywords.root_type_object(ROOT_OBJECT),),
        node_checks=(_types, _refs),
    )
}
