"""OpenAI (and Azure OpenAI: same validator, docs/provider-schema-rules.md §9): Chat Completions and
Responses, non-strict and strict. docs/provider-schema-rules.md §1-§3."""

from __future__ import annotations

from xpeval.evals.acceptance.checker import keywords
from xpeval.evals.acceptance.checker._types import ProviderMode, Rule
from xpeval.evals.acceptance.checker.keywords import Profile, SizeLimits

NAME_PATTERN = Rule(
    "openai.name-pattern",
    "Function names match ^[a-zA-Z0-9_-]+$.",
    "[err] github.com/brekkylab/ailoy/pull/109 (2025-06); github.com/openai/openai-dotnet/issues/441",
)
NAME_LENGTH = Rule(
    "openai.name-length",
    "Function names have at most 64 characters.",
    "[doc] `name` field: 'a maximum length of 64', quoted by v03.api.js.langchain.com",
)
ROOT_OBJECT = Rule(
    "openai.root-type-object",
    'parameters must be a schema of type: "object".',
    "[err] github.com/browserbase/stagehand/issues/1159 (2025-10)",
)
ROOT_PROPERTIES = Rule(
    "openai.object-missing-properties",
    "The root object schema needs `properties` (send {} for parameterless tools).",
    "[err] github.com/spring-projects/spring-ai/issues/4776",
)
ARRAY_ITEMS = Rule(
    "openai.array-missing-items",
    "Every array schema (also inside a type list) needs `items`.",
    "[err] github.com/sigoden/aichat/pull/1049 (2024-12); github.com/tidewave-ai/tidewave_phoenix/pull/224",
)
WELL_FORMED = Rule(
    "openai.schema-shape",
    'The schema is validated as a JSON Schema document first (`required: null` -> "None is not of '
    "type 'array'\", `properties: []` -> \"[] is not of type 'object'\").",
    "[err] github.com/yomorun/yomo/pull/860 (2024-07); github.com/maltekuhr/laravel-gpt/issues/8 (2024-03)",
)
STRICT_ROOT_ANY_OF = Rule(
    "openai.strict.root-any-of",
    "In strict mode the root object may not be an anyOf.",
    "[doc] developers.openai.com/api/docs/guides/structured-outputs#supported-schemas",
)
STRICT_ADDITIONAL = Rule(
    "openai.strict.additional-properties-false",
    "In strict mode every object (root, nested, in arrays and $defs) carries additionalProperties: false.",
    "[err] github.com/lastmile-ai/openai-agents-mcp/issues/2 (2025-03); "
    "github.com/xemantic/xemantic-ai-tool-schema/issues/37 (2025-08)",
)
STRICT_REQUIRED = Rule(
    "openai.strict.required-every-property",
    "In strict mode `required` lists every key of `properties` (optional = required + nullable).",
    "[err] github.com/prism-php/prism/pull/813 (2025-12)",
)
STRICT_DEFAULT = Rule(
    "openai.strict.default-not-permitted",
    "In strict mode `default` is not permitted.",
    "[err] zenn.dev/nicopin/scraps/a8d8f53f5faebb; [lib] pydantic/pydantic-ai "
    "tests/test_ref_sibling_wire_contract.py",
)
STRICT_UNSUPPORTED = Rule(
    "openai.strict.unsupported-keyword",
    "Strict mode supports anyOf as its only combinator and refuses allOf, oneOf, not, if/then/else, "
    "dependent*, patternProperties, unevaluatedProperties, propertyNames, min/maxProperties, contains, "
    "uniqueItems.",
    "[doc] developers.openai.com/api/docs/guides/structured-outputs#supported-schemas (supported list); "
    "[lib] docs.rs/crate/ultron-ai/1.0.2 src/constrained.rs",
)
STRICT_PATTERN = Rule(
    "openai.strict.pattern-lookaround",
    "Look-around assertions in `pattern` are not accepted.",
    "[lib] pydantic/pydantic-ai tests/profiles/test_openai.py::"
    "test_json_schema_transformer_removes_unsupported_regex_lookarounds",
)
STRICT_FORMAT = Rule(
    "openai.strict.format",
    "Strict mode supports a fixed set of string formats.",
    "[doc] developers.openai.com/api/docs/guides/structured-outputs#supported-schemas",
)
STRICT_FIRST_KEYS = Rule(
    "openai.strict.any-of-first-keys",
    "Objects provided via anyOf must not share identical first keys.",
    "[err] zenn.dev/nicopin/scraps/a8d8f53f5faebb",
)
STRICT_LIMITS = Rule(
    "openai.strict.size-limits",
    "Nesting depth <= 10, <= 5,000 object properties, <= 1,000 enum values, <= 120,000 characters of "
    "names and enum/const values, a string enum over 250 values <= 15,000 characters.",
    "[doc, quoted] docs.rs/crate/artifactize-core src/agent/verdict/structured/limits.rs; "
    "[err] github.com/tidyverse/ellmer/issues/671 (the older limit of 5)",
)

STRICT_UNSUPPORTED_KEYWORDS = (
    "allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
    "patternProperties", "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties",
    "contains", "uniqueItems",
)  # fmt: skip
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
LOOKAROUND = r"\(\?<?[=!]"
LIMITS = SizeLimits(
    max_object_depth=10,
    max_properties=5_000,
    max_enum_values=1_000,
    max_total_chars=120_000,
    large_string_enum=250,
    large_string_enum_chars=15_000,
)

_NON_STRICT = Profile(
    name_checks=(
        keywords.name_pattern(NAME_PATTERN, r"[a-zA-Z0-9_-]+"),
        keywords.name_length(NAME_LENGTH, 64),
    ),
    tool_checks=(
        keywords.root_type_object(ROOT_OBJECT),
        keywords.root_has_properties(ROOT_PROPERTIES),
        keywords.meta_schema(WELL_FORMED, follow_dollar_schema=True),
    ),
    node_checks=(keywords.array_needs_items(ARRAY_ITEMS),),
)
_STRICT = Profile(
    name_checks=_NON_STRICT.name_checks,
    tool_checks=(
        *_NON_STRICT.tool_checks,
        keywords.root_keywords_absent(STRICT_ROOT_ANY_OF, ("anyOf",)),
        keywords.size_limits(STRICT_LIMITS, LIMITS),
    ),
    node_checks=(
        *_NON_STRICT.node_checks,
        keywords.additional_properties_false(STRICT_ADDITIONAL),
        keywords.required_lists_every_property(STRICT_REQUIRED),
        keywords.keywords_absent(STRICT_DEFAULT, ("default",)),
        keywords.keywords_absent(
            STRICT_UNSUPPORTED, STRICT_UNSUPPORTED_KEYWORDS, "is not supported in strict mode"
        ),
        keywords.pattern_without(STRICT_PATTERN, LOOKAROUND, "a look-around assertion"),
        keywords.formats_allowed(STRICT_FORMAT, {"*": STRICT_FORMATS}),
        keywords.any_of_first_keys_distinct(STRICT_FIRST_KEYS),
    ),
)

PROFILES: dict[ProviderMode, Profile] = {
    "openai-chat": _NON_STRICT,
    "openai-responses": _NON_STRICT,
    "openai-chat-strict": _STRICT,
    "openai-responses-strict": _STRICT,
}
