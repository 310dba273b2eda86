"""Google Gemini function declarations: `parameters` (an OpenAPI 3.0 Schema subset, a proto
message) and `parametersJsonSchema` (JSON Schema). docs/provider-schema-rules.md §6-§7."""

from __future__ import annotations

import re
from collections.abc import Iterator

from xpeval.evals.acceptance.checker import keywords
from xpeval.evals.acceptance.checker._types import ProviderMode, Rule, Violation, violation
from xpeval.evals.acceptance.checker.keywords import NodeCheck, Profile, SentTool
from xpeval.evals.acceptance.checker.walk import Node

NAME_PATTERN = Rule(
    "gemini.name-pattern",
    "Function names start with a letter or an underscore, then letters, digits, _ . : -.",
    "[err] github.com/google-gemini/gemini-cli/issues/2966; github.com/maximhq/bifrost/issues/1979 "
    "(2026-03, with colons)",
)
NAME_LENGTH = Rule(
    "gemini.name-length",
    "Function names have at most 64 characters.",
    "[err] github.com/google-gemini/gemini-cli/issues/2966; "
    "[doc] hexdocs.pm/geminix (FunctionDeclaration.name)",
)
ROOT_OBJECT = Rule(
    "gemini.root-type-object",
    "The parameters schema describes an object whose properties are the arguments.",
    "[doc] hexdocs.pm/geminix/Geminix.V1beta.FunctionDeclaration.html",
)
UNKNOWN_FIELD = Rule(
    "gemini.parameters.unknown-field",
    "`parameters` is a proto Schema message: any other key is 'Unknown name ... Cannot find field'.",
    "[doc] googleapis.github.io/js-genai types.Schema; [err] github.com/nanbingxyz/5ire/issues/42, "
    "github.com/openswarm-ai/openswarm/issues/24, github.com/zed-industries/zed/issues/44875",
)
TYPE_LIST = Rule(
    "gemini.parameters.type-not-repeated",
    "`type` is a single value: a type array is 'Proto field is not repeating, cannot start list'.",
    "[err] github.com/zed-industries/zed/issues/53919",
)
TYPE_VALUE = Rule(
    "gemini.parameters.type-value",
    "`type` is one of the OpenAPI types (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT).",
    "[err] github.com/google-gemini/deprecated-generative-ai-js/issues/320; [doc] "
    "cloud.google.com/vertex-ai/docs/reference/rest/v1/Schema",
)
TYPE_REQUIRED = Rule(
    "gemini.parameters.type-required",
    "Every schema node needs a type unless it uses any_of.",
    "[err] github.com/danny-avila/LibreChat/issues/6971",
)
OBJECT_PROPERTIES = Rule(
    "gemini.parameters.object-properties-non-empty",
    "An OBJECT schema needs non-empty `properties`.",
    "[err] github.com/langchain-ai/langchainjs/pull/7935 (2025-03); github.com/brainlid/langchain/pull/183",
)
ENUM_STRING = Rule(
    "gemini.parameters.enum-string-only",
    "`enum` is only allowed for STRING type, and its values are strings.",
    "[err] github.com/microsoft/azure-devops-mcp/issues/139; github.com/decolua/9router/pull/380",
)
FORMAT = Rule(
    "gemini.parameters.format",
    "Supported formats: enum and date-time for STRING, float and double for NUMBER, int32 and int64 "
    "for INTEGER.",
    "[doc] firebase.google.com/docs/reference/js/ai.schemashared; "
    "docs.cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema",
)
PROPERTY_NAME = Rule(
    "gemini.parameters.property-name",
    "Parameter names start with a letter or an underscore, then letters, digits, underscores; max 64.",
    "[doc] googleapis.github.io/java-genai FunctionDeclaration.Builder.parameters",
)
REF_SIBLINGS = Rule(
    "gemini.json-schema.ref-siblings",
    "A node with $ref may only carry description and default beside it.",
    "[err] github.com/anomalyco/opencode/issues/12295 (2026-02)",
)
REF_RESOLVES = Rule(
    "gemini.json-schema.ref-resolves",
    "Every $ref resolves inside the document.",
    "[err] github.com/google-gemini/gemini-cli/issues/13326 (2025-11)",
)
CONDITIONALS = Rule(
    "gemini.json-schema.conditional",
    "if/then/else were refused.",
    "[err, quoted in PR] github.com/zendev-sh/goai/pull/39 (2026-04)",
)

SCHEMA_FIELDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems",
        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
        "example", "anyOf", "propertyOrdering", "default", "minimum", "maximum",
    }
)  # fmt: skip
TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
FORMATS = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
PROPERTY_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _unknown_fields(tool: SentTool, node: Node) -> Iterator[Violation]:
    if isinstance(node.schema, dict):
        for key in node.schema:
            if key not in SCHEMA_FIELDS:
                yield violation(
                    UNKNOWN_FIELD,
                    tool.at((*node.path, key)),
                    f'Unknown name "{key}": Cannot find field.',
                    key,
                )


def _type(tool: SentTool, node: Node) -> Iterator[Violation]:
    schema = node.schema
    if not isinstance(schema, dict):
        return
    declared = schema.get("type")
    at = tool.at((*node.path, "type"))
    if isinstance(declared, list):
        yield violation(TYPE_LIST, at, "Proto field is not repeating, cannot start list.", "type")
    elif declared is None:
        if "anyOf" not in schema:
            yield violation(TYPE_REQUIRED, at, "type: must be specified when not using any_of", "type")
    elif not isinstance(declared, str) or declared.lower() not in TYPES:
        yield violation(TYPE_VALUE, at, f"Invalid value at 'type' (Type), {declared!r}", "type")


def _object_properties(tool: SentTool, node: Node) -> Iterator[Violation]:
    schema = node.schema
    if (
        isinstance(schema, dict)
        and isinstance(schema.get("type"), str)
        and schema["type"].lower() == "object"
    ):
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            yield violation(
                OBJECT_PROPERTIES,
                tool.at((*node.path, "properties")),
                "properties: should be non-empty for OBJECT type",
                "properties",
            )


def _enum(tool: SentTool, node: Node) -> Iterator[Violation]:
    schema = node.schema
    if not isinstance(schema, dict) or "enum" not in schema:
        return
    declared = schema.get("type")
    if not (isinstance(declared, str) and declared.lower() == "string"):
        yield violation(
            ENUM_STRING,
            tool.at((*node.path, "enum")),
            "function declaration enum only allowed for STRING type",
            "enum",
        )
    values = schema["enum"]
    for index, value in enumerate(values if isinstance(values, list) else []):
        if not isinstance(value, str):
            yield violation(
                ENUM_STRING,
                tool.at((*node.path, "enum", str(index))),
                f"Invalid value at 'enum[{index}]' (TYPE_STRING), {value!r}",
                "enum",
            )


def _property_names(tool: SentTool, node: Node) -> Iterator[Violation]:
    properties = node.schema.get("properties") if isinstance(node.schema, dict) else None
    if isinstance(properties, dict):
        for key in properties:
            if not PROPERTY_NAME_PATTERN.fullmatch(str(key)):
                yield violation(
                    PROPERTY_NAME,
                    tool.at((*node.path, "properties", str(key))),
                    f"parameter name {key!r} must start with a letter or underscore and use letters, "
                    "digits and underscores (max 64)",
                    "properties",
                )


_NAME_CHECKS = (
    keywords.name_pattern(NAME_PATTERN, r"[A-Za-z_][A-Za-z0-9_.:-]*"),
    keywords.name_length(NAME_LENGTH, 64),
)
_PARAMETERS_NODES: tuple[NodeCheck, ...] = (
    _unknown_fields,
    _type,
    _object_properties,
    _enum,
    keywords.formats_allowed(FORMAT, FORMATS),
    _property_names,
)

PROFILES: dict[ProviderMode, Profile] = {
    "gemini-parameters": Profile(
        name_checks=_NAME_CHECKS,
        tool_checks=(keywords.root_type_object(ROOT_OBJECT, any_case=True),),
        node_checks=_PARAMETERS_NODES,
    ),
    "gemini-json-schema": Profile(
        name_checks=_NAME_CHECKS,
        tool_checks=(keywords.root_type_object(ROOT_OBJECT),),
        node_checks=(
            keywords.ref_siblings_only(
                REF_SIBLINGS, frozenset({"description", "default"}), "unsupported fields"
            ),
            keywords.refs_resolve(REF_RESOLVES),
            keywords.keywords_absent(CONDITIONALS, ("if", "then", "else"), "is not supported"),
        ),
    ),
}
