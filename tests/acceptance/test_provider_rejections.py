"""Replays of real provider rejections (`shared/corpus/errors/*.jsonl`).

For every error line whose offending schema shape can be read from the message, the tool is
rebuilt with that shape and the checker must name the same problem the provider named: the
same rule, at the same place, about the same keyword. Lines that cannot be replayed are listed
with the reason, and a test fails when a new line appears without a decision.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests._corpus import corpus_files, corpus_path
from xpeval.evals.acceptance.checker import ProviderMode, Violation, build_definition, check, check_request


def _obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def _nested_objects(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = _obj({"leaf": {"type": "string"}}, required=["leaf"], additionalProperties=False)
    for _ in range(levels - 1):
        schema = _obj({"child": schema}, required=["child"], additionalProperties=False)
    return schema


def _deep_arrays(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return _obj({"deep": schema})


@dataclass(frozen=True)
class Replay:
    """One provider rejection rebuilt as a tool definition."""

    provider: str
    fragment: str
    """A piece of the provider's message that identifies the corpus line."""
    mode: ProviderMode
    schema: dict[str, Any] = field(default_factory=lambda: _obj({"q": {"type": "string"}}))
    rule: str = ""
    pointer: str = ""
    named: str | None = None
    """What the provider's message names (a keyword, a field); the violation must name it too."""
    name: str = "tool"
    tools: int = 1

    @property
    def id(self) -> str:
        return f"{self.provider}:{self.rule}:{self.fragment[:30]}"

    def violations(self) -> list[Violation]:
        definition = build_definition(self.mode, self.name, "d", self.schema)
        if self.tools == 1:
            return check(self.mode, definition)
        return check_request(self.mode, [definition] * self.tools)


STRICT_OK = {"additionalProperties": False, "required": ["q"]}

REPLAYS: list[Replay] = [
    # --- Anthropic ------------------------------------------------------------------------------
    Replay(
        "anthropic",
        "'^[a-zA-Z0-9_-]{1,64}$'",
        "anthropic",
        name="github.search_issues",
        rule="anthropic.name-pattern",
        pointer="/name",
        named="name",
    ),
    Replay(
        "anthropic",
        "'^[a-zA-Z0-9_-]{1,128}$'",
        "anthropic",
        name="server:tool",
        rule="anthropic.name-pattern",
        pointer="/name",
        named="name",
    ),
    Replay(
        "anthropic",
        "at most 128 characters",
        "anthropic",
        name="a" * 129,
        rule="anthropic.name-length",
        pointer="/name",
        named="name",
    ),
    # The report does not show its schema; a draft-04 form is one of the triggers it names.
    Replay(
        "anthropic",
        "must match JSON Schema draft 2020-12",
        "anthropic",
        schema=_obj({"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}),
        rule="anthropic.draft-2020-12",
        pointer="/input_schema/properties/n/exclusiveMinimum",
        named="input_schema",
    ),
    Replay(
        "anthropic",
        "does not support oneOf, allOf, or anyOf at the top level",
        "anthropic",
        schema={
            "type": "object",
            "anyOf": [_obj({"a": {"type": "string"}}), _obj({"b": {"type": "string"}})],
        },
        rule="anthropic.root-combinator",
        pointer="/input_schema/anyOf",
        named="anyOf",
    ),
    # The grammar budget is not published; the reporters cite 24 optional properties.
    Replay(
        "anthropic",
        "compiled grammar is too large",
        "anthropic-strict",
        schema=_obj({f"p{i}": {"type": "string"} for i in range(26)}, additionalProperties=False),
        rule="anthropic.strict.grammar-budget",
        pointer="/input_schema",
    ),
    Replay(
        "anthropic",
        "Schema is too complex for compilation",
        "anthropic-strict",
        schema=_obj({f"p{i}": {"type": "string"} for i in range(25)}, additionalProperties=False),
        rule="anthropic.strict.grammar-budget",
        pointer="/input_schema",
    ),
    # --- Azure OpenAI (the OpenAI validator) -------------------------------------------------------
    Replay(
        "azure-openai",
        "In context=(), 'additionalProperties'",
        "openai-responses-strict",
        schema=_obj({"q": {"type": "string"}}, required=["q"]),
        rule="openai.strict.additional-properties-false",
        pointer="/parameters",
        named="additionalProperties",
    ),
    # --- Gemini `parameters` --------------------------------------------------------------------------
    Replay(
        "gemini",
        'Unknown name "additionalProperties"',
        "gemini-parameters",
        schema=_obj(
            {
                "a": {"type": "string"},
                "b": {"type": "array", "items": _obj({"x": {"type": "string"}}, additionalProperties=False)},
            }
        ),
        rule="gemini.parameters.unknown-field",
        pointer="/parameters/properties/b/items/additionalProperties",
        named="additionalProperties",
    ),
    Replay(
        "gemini",
        'Unknown name "$schema"',
        "gemini-parameters",
        schema=_obj({"a": {"type": "string"}}, **{"$schema": "http://json-schema.org/draft-07/schema#"}),
        rule="gemini.parameters.unknown-field",
        pointer="/parameters/$schema",
        named="$schema",
    ),
    Replay(
        "gemini",
        'Unknown name "propertyNames"',
        "gemini-parameters",
        schema=_obj(
            {
                "a": {"type": "string"},
                "b": {
                    "type": "object",
                    "properties": {"k": {"type": "string"}},
                    "propertyNames": {"pattern": "^[a-z]+$"},
                },
            }
        ),
        rule="gemini.parameters.unknown-field",
        pointer="/parameters/properties/b/propertyNames",
        named="propertyNames",
    ),
    Replay(
        "gemini",
        'Unknown name "const"',
        "gemini-parameters",
        schema=_obj({"p": {"anyOf": [{"type": "string", "const": "a"}, {"type": "integer"}]}}),
        rule="gemini.parameters.unknown-field",
        pointer="/parameters/properties/p/anyOf/0/const",
        named="const",
    ),
    Replay(
        "gemini",
        "Proto field is not repeating",
        "gemini-parameters",
        schema=_obj({"p": _obj({"q": {"type": ["string", "null"]}})}),
        rule="gemini.parameters.type-not-repeated",
        pointer="/parameters/properties/p/properties/q/type",
        named="type",
    ),
    Replay(
        "gemini",
        "should be non-empty for OBJECT type",
        "gemini-parameters",
        schema=_obj({}),
        rule="gemini.parameters.object-properties-non-empty",
        pointer="/parameters/properties",
        named="properties",
    ),
    Replay(
        "gemini",
        "must be specified when not using one_of",
        "gemini-parameters",
        schema=_obj({"command": {"description": "shell command"}}),
        rule="gemini.parameters.type-required",
        pointer="/parameters/properties/command/type",
        named="type",
    ),
    Replay(
        "gemini",
        "(TYPE_STRING), 2",
        "gemini-parameters",
        schema=_obj({"n": {"type": "integer", "enum": [1, 2]}}),
        rule="gemini.parameters.enum-string-only",
        pointer="/parameters/properties/n/enum/1",
        named="enum",
    ),
    Replay(
        "gemini",
        'v1beta.Type), "enum"',
        "gemini-parameters",
        schema=_obj({"mode": {"type": "enum", "enum": ["a", "b"]}}),
        rule="gemini.parameters.type-value",
        pointer="/parameters/properties/mode/type",
        named="type",
    ),
    Replay(
        "gemini",
        "enum only allowed for STRING type",
        "gemini-parameters",
        schema=_obj({"mode": {"enum": ["a", "b"]}}),
        rule="gemini.parameters.enum-string-only",
        pointer="/parameters/properties/mode/enum",
        named="enum",
    ),
    Replay(
        "gemini",
        "dots (.) or dashes (-), with a maximum length of 64",
        "gemini-json-schema",
        name="files/read",
        rule="gemini.name-pattern",
        pointer="/name",
        named="name",
    ),
    Replay(
        "gemini",
        "colons (:), or dashes (-)",
        "gemini-json-schema",
        name="9lives",
        rule="gemini.name-pattern",
        pointer="/name",
        named="name",
    ),
    Replay(
        "gemini",
        "At most 512 function declarations",
        "gemini-json-schema",
        tools=513,
        rule="gemini.declaration-count",
        pointer="/tools",
    ),
    Replay(
        "gemini",
        "exceeds the maximum allowed nesting depth",
        "gemini-json-schema",
        schema=_deep_arrays(600),
        rule="schema.nesting-depth",
        pointer="/parametersJsonSchema",
        named="nesting depth",
    ),
    # --- Gemini `parametersJsonSchema` ----------------------------------------------------------------
    Replay(
        "gemini",
        "$ref 'QuestionOption' was set alongside unsupported fields",
        "gemini-json-schema",
        schema=_obj(
            {"options": {"type": "array", "items": {"$ref": "#/$defs/QuestionOption", "title": "Opt"}}},
            **{"$defs": {"QuestionOption": _obj({"label": {"type": "string"}})}},
        ),
        rule="gemini.json-schema.ref-siblings",
        pointer="/parametersJsonSchema/properties/options/items",
        named="$ref",
    ),
    Replay(
        "gemini",
        "reference to undefined schema at properties.target_object.anyOf.1",
        "gemini-json-schema",
        schema=_obj({"target_object": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Target"}]}}),
        rule="gemini.json-schema.ref-resolves",
        pointer="/parametersJsonSchema/properties/target_object/anyOf/1/$ref",
        named="reference to undefined schema",
    ),
    # --- Moonshot -------------------------------------------------------------------------------------
    Replay(
        "moonshot",
        "when using $ref, type should be defined in the referenced schema",
        "moonshot",
        schema=_obj(
            {"x": {"$ref": "#/$defs/__schema20"}},
            **{
                "$defs": {
                    "__schema20": {"$ref": "#/$defs/Base", "type": "object"},
                    "Base": _obj({"a": {"type": "string"}}),
                }
            },
        ),
        rule="moonshot.ref-with-type",
        pointer="/function/parameters/$defs/__schema20",
        named="type",
    ),
    Replay(
        "moonshot",
        "$defs not found for reference: #/$defs/IdentifySessionExternalParams",
        "moonshot",
        schema=_obj({"external": {"$ref": "#/$defs/IdentifySessionExternalParams"}}),
        rule="moonshot.ref-root-defs",
        pointer="/function/parameters/properties/external/$ref",
        named="#/$defs/IdentifySessionExternalParams",
    ),
    Replay(
        "moonshot",
        "<At path 'root': when using anyOf",
        "moonshot",
        schema={
            "type": "object",
            "anyOf": [_obj({"a": {"type": "string"}}), _obj({"b": {"type": "string"}})],
        },
        rule="moonshot.any-of-parent-type",
        pointer="/function/parameters",
        named="anyOf",
    ),
    Replay(
        "moonshot",
        "$ref must be a string",
        "moonshot",
        schema=_obj({"content": _obj({"$ref": {"type": "string"}, "kind": {"type": "string"}})}),
        rule="moonshot.ref-must-be-string",
        pointer="/function/parameters/properties/content/properties/$ref",
        named="$ref",
    ),
    Replay(
        "moonshot",
        "<At path 'properties.source': type is not defined>",
        "moonshot",
        # walle says this of an enum whose node has no type (an untyped node without enum passes)
        schema=_obj({"source": {"description": "where from", "enum": ["web", "file"]}}),
        rule="moonshot.type-not-defined",
        pointer="/function/parameters/properties/source",
        named="type",
    ),
    Replay(
        "moonshot",
        'parameters.type is required and must be "object"',
        "moonshot",
        schema={"properties": {"a": {"type": "string"}}},
        rule="moonshot.root-type-object",
        pointer="/function/parameters",
        named="type",
    ),
    # --- OpenAI ---------------------------------------------------------------------------------------
    Replay(
        "openai",
        "function '<...>': In context=(), 'additionalProperties'",
        "openai-chat-strict",
        schema=_obj({"q": {"type": "string"}}, required=["q"]),
        rule="openai.strict.additional-properties-false",
        pointer="/function/parameters",
        named="additionalProperties",
    ),
    Replay(
        "openai",
        "In context=('properties', 'permissions'), 'additionalProperties'",
        "openai-responses-strict",
        schema=_obj(
            {"permissions": _obj({"mode": {"type": "string"}}, required=["mode"])},
            required=["permissions"],
            additionalProperties=False,
        ),
        rule="openai.strict.additional-properties-false",
        pointer="/parameters/properties/permissions",
        named="additionalProperties",
    ),
    Replay(
        "openai",
        "Missing 'bar'",
        "openai-chat-strict",
        schema=_obj(
            {"foo": {"type": "string"}, "bar": {"type": "string"}},
            required=["foo"],
            additionalProperties=False,
        ),
        rule="openai.strict.required-every-property",
        pointer="/function/parameters",
        named="'bar'",
    ),
    Replay(
        "openai",
        "In context=('properties', 'placeholder'), 'default' is not permitted",
        "openai-chat-strict",
        schema=_obj(
            {"placeholder": {"type": "string", "default": ""}}, **STRICT_OK | {"required": ["placeholder"]}
        ),
        rule="openai.strict.default-not-permitted",
        pointer="/function/parameters/properties/placeholder/default",
        named="default",
    ),
    Replay(
        "openai",
        "must not share identical first keys",
        "openai-chat-strict",
        schema=_obj(
            {
                "block": {
                    "anyOf": [
                        _obj(
                            {"kind": {"const": "a"}, "a": {"type": "string"}},
                            required=["kind", "a"],
                            additionalProperties=False,
                        ),
                        _obj(
                            {"kind": {"const": "b"}, "b": {"type": "string"}},
                            required=["kind", "b"],
                            additionalProperties=False,
                        ),
                    ]
                }
            },
            required=["block"],
            additionalProperties=False,
        ),
        rule="openai.strict.any-of-first-keys",
        pointer="/function/parameters/properties/block/anyOf",
        named="anyOf",
    ),
    # Historical limit (5); the current documented limit is 10, so the replay nests 11 levels.
    Replay(
        "openai",
        "levels of nesting exceeds limit of 5",
        "openai-chat-strict",
        schema=_nested_objects(11),
        rule="openai.strict.size-limits",
        pointer="/function/parameters",
        named="levels of nesting exceeds limit",
    ),
    Replay(
        "openai",
        "got 'type: \"None\"'",
        "openai-chat",
        schema={"properties": {"a": {"type": "string"}}},
        rule="openai.root-type-object",
        pointer="/function/parameters",
        named="type",
    ),
    Replay(
        "openai",
        "In context=('properties', 'paths'), array schema missing items",
        "openai-chat",
        schema=_obj({"paths": {"type": "array"}}),
        rule="openai.array-missing-items",
        pointer="/function/parameters/properties/paths",
        named="items",
    ),
    Replay(
        "openai",
        "In context=('properties', 'arguments', 'items', 'type', '0')",
        "openai-chat",
        schema=_obj({"arguments": {"type": "array", "items": {"type": ["array", "null"]}}}),
        rule="openai.array-missing-items",
        pointer="/function/parameters/properties/arguments/items",
        named="items",
    ),
    Replay(
        "openai",
        "object schema missing properties",
        "openai-chat",
        schema={"type": "object"},
        rule="openai.object-missing-properties",
        pointer="/function/parameters",
        named="properties",
    ),
    Replay(
        "openai",
        "None is not of type 'array'",
        "openai-chat",
        schema=_obj({"a": {"type": "string"}}, required=None),
        rule="openai.schema-shape",
        pointer="/function/parameters/required",
        named="None is not of type 'array'",
    ),
    Replay(
        "openai",
        "[] is not of type 'object'",
        "openai-chat",
        schema={"type": "object", "properties": []},
        rule="openai.schema-shape",
        pointer="/function/parameters/properties",
        named="[] is not of type 'object'",
    ),
    Replay(
        "openai",
        "array too long. Expected an array with maximum length 128",
        "openai-chat",
        tools=325,
        rule="openai.tool-count",
        pointer="/tools",
        named="array too long",
    ),
    Replay(
        "openai",
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that "
        "matches the pattern '^[a-zA-Z0-9_-]+$'",
        "openai-chat",
        name="filesystem.read_file",
        rule="openai.name-pattern",
        pointer="/function/name",
        named="name",
    ),
    Replay(
        "openai",
        "Invalid 'tools[0].name'",
        "openai-responses-strict",
        name="mcp.fetch",
        schema=_obj({"q": {"type": "string"}}, **STRICT_OK),
        rule="openai.name-pattern",
        pointer="/name",
        named="name",
    ),
]

NOT_REPLAYED: dict[tuple[str, str], str] = {
    (
        "azure-openai",
        "response_format value as json_schema is enabled only for api versions",
    ): "an api-version gate on response_format, not a tool definition",
    (
        "azure-openai",
        "'response_format' must be one of",
    ): "an api-version gate on response_format, not a tool definition",
    (
        "gemini",
        "too many states for serving",
    ): "Gemini's constraint-state budget is unpublished (the report sent 239 tools): no rule can predict it",
    ("gemini", "Request contains an invalid argument."): "a generic rejection that names nothing",
    (
        "groq",
        "'required' present but 'properties' is missing",
    ): "no registered adapter is judged by Groq's rules (openai-compatible is judged by OpenAI's, which "
    "accept this shape)",
    ("groq", "compilation failed"): "no registered adapter is judged by Groq's rules",
    ("mistral", "Function name was"): "no registered adapter is judged by Mistral's rules",
    (
        "openai",
        "string too long. Expected a string with maximum length 1024",
    ): (
        "seen only through a relay; docs/provider-schema-rules.md §1 marks the 1024 cap "
        "unconfirmed, so it is not enforced"
    ),
    (
        "openai",
        "'^[a-zA-Z0-9_\\\\.-]+$'",
    ): "a name-pattern variant from an unidentified endpoint (OpenAI or Azure); not attributable to a mode",
    (
        "moonshot",
        "conflicting keywords found after $ref expansion: description",
    ): (
        "a description repeated beside a $ref and in its target: refused by walle before "
        "github.com/MoonshotAI/walle/pull/17 (2026-06-01) kept that refusal for its ultra level; at lite, "
        "the level the server requires, it passes, and description-only siblings were seen tolerated "
        "in 2026-08 (github.com/lidge-jun/opencodex/pull/2677): docs/provider-schema-rules.md §8"
    ),
    ("openrouter", "Provider returned error"): "a wrapper; the upstream's own error carries the rule",
}


@pytest.mark.corpus
@pytest.mark.parametrize("replay", REPLAYS, ids=lambda r: r.id)
def test_the_checker_names_the_problem_the_provider_named(replay: Replay) -> None:
    line = _corpus_line(replay.provider, replay.fragment)
    found = replay.violations()
    matching = [v for v in found if v.rule == replay.rule and v.pointer == replay.pointer]
    assert matching, f"{replay.rule} at {replay.pointer} not found in {[(v.rule, v.pointer) for v in found]}"
    if replay.named is not None:
        assert replay.named in line["message"], f"the provider's message does not name {replay.named!r}"
        named = [
            v
            for v in matching
            if any(replay.named in text for text in (v.keyword or "", v.message, v.pointer))
        ]
        assert named, (
            f"the violation does not name {replay.named!r}: {[(m.keyword, m.message) for m in matching]}"
        )


@pytest.mark.corpus
@pytest.mark.parametrize("replay", REPLAYS, ids=lambda r: r.id)
def test_the_same_tool_without_the_offending_shape_passes_that_rule(replay: Replay) -> None:
    """The replayed violation comes from the offending shape, not from the rest of the tool."""
    clean = Replay(replay.provider, replay.fragment, replay.mode, schema=_clean_schema(replay.mode))
    assert not [v for v in clean.violations() if v.rule == replay.rule]


def test_every_recorded_rejection_is_replayed_or_explained() -> None:
    files = corpus_files("errors/*.jsonl")
    if not files:
        corpus_path("errors")
    for path in files:
        for raw in path.read_text().splitlines():
            line = json.loads(raw)
            message = line["message"]
            replayed = [r for r in REPLAYS if r.provider == line["provider"] and r.fragment in message]
            explained = [k for k in NOT_REPLAYED if k[0] == line["provider"] and k[1] in message]
            assert replayed or explained, f"no decision for {line['provider']}: {line['message']!r}"


def _corpus_line(provider: str, fragment: str) -> dict[str, Any]:
    path = corpus_path("errors", f"{provider}.jsonl")
    lines = [json.loads(raw) for raw in path.read_text().splitlines()]
    found = [line for line in lines if fragment in line["message"]]
    assert len(found) == 1, (
        f"{fragment!r} should identify exactly one line of {path.name}, found {len(found)}"
    )
    parsed: dict[str, Any] = found[0]
    return parsed


_CLEAN: dict[str, Callable[[], dict[str, Any]]] = {
    "strict": lambda: _obj({"q": {"type": "string"}}, required=["q"], additionalProperties=False),
    "plain": lambda: _obj({"q": {"type": "string"}}),
}


def _clean_schema(mode: ProviderMode) -> dict[str, Any]:
    return _CLEAN["strict" if "strict" in mode else "plain"]()
