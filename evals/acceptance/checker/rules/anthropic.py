"""Anthropic Messages `tools[].input_schema`, non-strict and strict. docs/provider-schema-rules.md §4-§5."""

from __future__ import annotations

from xpeval.evals.acceptance.checker import keywords
from xpeval.evals.acceptance.checker._types import ProviderMode, Rule
from xpeval.evals.acceptance.checker.keywords import Profile

NAME_PATTERN = Rule(
    "anthropic.name-pattern",
    "Tool names match ^[a-zA-Z0-9_-]{1,128}$ (64 until 2025).",
    "[err] github.com/modelcontextprotocol/typescript-sdk/issues/413 (2025-04); "
    "github.com/netclaw-dev/netclaw/issues/1133 (2026-05)",
)
NAME_LENGTH = Rule(
    "anthropic.name-length",
    "Tool names have at most 128 characters.",
    "[err] github.com/anthropics/claude-code/issues/96152 (2026-09)",
)
DRAFT_2020_12 = Rule(
    "anthropic.draft-2020-12",
    "input_schema must be valid JSON Schema draft 2020-12.",
    "[err] github.com/anthropics/claude-code/issues/63673 (2026-05); "
    "github.com/anthropics/claude-code/issues/9605 (2025-10)",
)
ROOT_OBJECT = Rule(
    "anthropic.root-type-object",
    'input_schema must be an object schema (type: "object").',
    "[err] github.com/home-assistant/core/issues/181282 (2026-09): non-object root among the triggers "
    "of 'JSON schema is invalid'",
)
ROOT_COMBINATOR = Rule(
    "anthropic.root-combinator",
    "input_schema does not support oneOf, allOf, or anyOf at the top level.",
    "[err] github.com/anthropics/claude-code/issues/5319 (2025-08); "
    "github.com/marianfoo/mcp-sap-docs/pull/51",
)
STRICT_ADDITIONAL = Rule(
    "anthropic.strict.additional-properties-false",
    "Strict tools need additionalProperties: false on every object.",
    "[doc summary] git.waymay.us json-outputs-implementer/reference/schema-limitations.md (2025-11); "
    "[lib] docs.rs/crate/yoagent/0.20.0 docs/concepts/structured-outputs.md",
)
STRICT_BOUNDS = Rule(
    "anthropic.strict.unsupported-bound",
    "Strict tools support no numeric bounds, no string length bounds and no array bounds other than "
    "minItems 0 or 1.",
    "[doc summary] git.waymay.us json-outputs-implementer/reference/schema-limitations.md; "
    "[lib] github.com/alphaXiv/agents/pull/49",
)
STRICT_RECURSION = Rule(
    "anthropic.strict.recursive-schema",
    "Strict tools do not support recursive schemas.",
    "[doc summary] git.waymay.us json-outputs-implementer/reference/schema-limitations.md",
)
STRICT_EXTERNAL_REF = Rule(
    "anthropic.strict.external-ref",
    "Strict tools support local $ref only.",
    "[doc summary] git.waymay.us json-outputs-implementer/reference/schema-limitations.md",
)
STRICT_REGEX = Rule(
    "anthropic.strict.complex-pattern",
    "Strict tools do not support complex regexes (look-around, back-references).",
    "[doc summary] git.waymay.us json-outputs-implementer/reference/schema-limitations.md",
)
STRICT_FORMAT = Rule(
    "anthropic.strict.format",
    "Strict tools support a fixed set of string formats.",
    "[doc summary] git.waymay.us json-outputs-implementer/reference/schema-limitations.md",
)
STRICT_OPTIONAL_BUDGET = Rule(
    "anthropic.strict.grammar-budget",
    "All strict tools compile into one grammar; reported ceiling: 24 optional properties in total "
    "(a single tool over it fails on its own).",
    "[err] github.com/anthropics/anthropic-sdk-typescript/issues/885 (2026-02); "
    'github.com/genkit-ai/genkit/issues/5230; github.com/alphaXiv/agents/pull/51 ("26 optional '
    'properties against a limit of 24")',
)

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
BOUND_KEYWORDS = (
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "maxItems",
)  # fmt: skip
COMPLEX_REGEX = r"\(\?<?[=!]|\\[1-9]|\\k<"
OPTIONAL_BUDGET = 24

_MESSAGES = Profile(
    name_checks=(
        keywords.name_pattern(NAME_PATTERN, r"[a-zA-Z0-9_-]{1,128}"),
        keywords.name_length(NAME_LENGTH, 128),
    ),
    tool_checks=(
        keywords.root_type_object(ROOT_OBJECT),
        keywords.root_keywords_absent(ROOT_COMBINATOR, ("oneOf", "allOf", "anyOf")),
        keywords.meta_schema(DRAFT_2020_12, follow_dollar_schema=False),
    ),
    node_checks=(),
)
_STRICT = Profile(
    name_checks=_MESSAGES.name_checks,
    tool_checks=(
        *_MESSAGES.tool_checks,
        keywords.not_recursive(STRICT_RECURSION),
        keywords.optional_properties_at_most(STRICT_OPTIONAL_BUDGET, OPTIONAL_BUDGET),
    ),
    node_checks=(
        keywords.additional_properties_false(STRICT_ADDITIONAL),
        keywords.keywords_absent(STRICT_BOUNDS, BOUND_KEYWORDS, "is not supported by strict tools"),
        keywords.number_at_most(STRICT_BOUNDS, "minItems", 1),
        keywords.local_refs_only(STRICT_EXTERNAL_REF),
        keywords.pattern_without(STRICT_REGEX, COMPLEX_REGEX, "a construct strict tools do not support"),
        keywords.formats_allowed(STRICT_FORMAT, {"*": STRICT_FORMATS}),
    ),
)

PROFILES: dict[ProviderMode, Profile] = {"anthropic": _MESSAGES, "anthropic-strict": _STRICT}
