"""Why a tool is not sent: every refusal names one rule of `REFUSAL_RULES`, and each rule names
where it comes from.

A rule's source is a place in the repository (`docs/provider-schema-rules.md §N`, where the
provider's evidence is cited, or a `RULES.md` for xpeval's own limits) and a phrase that place
says; `tests/schema/test_refusal_rules.py` checks both, and that each rule has a schema that
triggers it. Both documents ship inside the package (`source_file`), so a citation resolves where
xpeval is installed, not only in a checkout.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

RULES_DOC = "docs/provider-schema-rules.md"
PASS_RULES = "adapters/schema/RULES.md"


@dataclass(frozen=True)
class RefusalRule:
    """One reason a tool cannot be sent, and its source."""

    id: str
    summary: str
    where: str
    """The document (and section) the rule is read from: `docs/provider-schema-rules.md §2`."""
    quote: str
    """A phrase of that section stating the rule (its code spans and emphasis left out)."""

    @property
    def source(self) -> str:
        return f'{self.where}: "{self.quote}"'


def source_file(where: str) -> Traversable:
    """The file a rule's `where` names (`docs/provider-schema-rules.md §6`), inside the installed
    xpeval: the documents of docs/ it cites ship as `xpeval/docs/...`, a `RULES.md` of
    adapters/ as `xpeval/adapters/.../RULES.md`, under the same relative path as in the repository."""
    return files("xpeval").joinpath(where.partition(" ")[0])


def _doc(section: str) -> str:
    return f"{RULES_DOC} {section}"


NOT_JSON_SCHEMA = RefusalRule(
    "schema.not-json-schema",
    "A keyword's value no JSON Schema validator takes (a map or array of the wrong kind, an unknown "
    "type name, a number JSON cannot carry).",
    _doc("§1"),
    "The schema is validated as a JSON Schema document first",
)
ROOT_NOT_OBJECT = RefusalRule(
    "schema.root-not-object",
    "The parameters schema must describe an object.",
    _doc("§13.2"),
    'Root: always {"type": "object", "properties": {...}}',
)
ROOT_UNION = RefusalRule(
    "schema.root-union",
    "A root union of several object shapes cannot be sent without losing the union.",
    _doc("§13.2"),
    "never a root combinator",
)
UNRESOLVABLE_REF = RefusalRule(
    "schema.unresolvable-ref",
    "A $ref that does not resolve inside the document.",
    _doc("§7"),
    "Every $ref resolves inside the document",
)
BUDGET_SPENT = RefusalRule(
    "schema.budget-spent",
    "A pass budget was spent and the dialect has no schema for an unconstrained value.",
    PASS_RULES,
    'a dialect without an "any value" schema refuses instead',
)
UNKNOWN_DIALECT = RefusalRule(
    "schema.unknown-dialect",
    "The adapter names a dialect no pass implements.",
    PASS_RULES,
    "registered in apply.RULES",
)
PASS_ERROR = RefusalRule(
    "xpeval.pass-error",
    "The pass failed on this schema (a bug, recorded instead of raised).",
    PASS_RULES,
    "Never raises for any input value",
)
WIRE_ERROR = RefusalRule(
    "xpeval.wire-error",
    "The wire could not encode the tool (a bug, recorded instead of raised).",
    "adapters/wires/RULES.md",
    "A wire never raises",
)
NO_TOOL = RefusalRule(
    "xpeval.no-tool",
    "The entry has no tool to measure (it could not be read).",
    "docs/tools-input.md",
    "Anything xpeval cannot read is reported as such",
)
DUPLICATE_NAME = RefusalRule(
    "request.duplicate-name",
    "Two tools of one request with the same name: decoded calls could not be told apart.",
    _doc("§13.1"),
    "keep a reversible mapping so decoded calls come back under the original name",
)
TOOL_CAP = RefusalRule(
    "request.tool-cap",
    "More tools than one request of the provider takes.",
    _doc("§13.8"),
    "Tools per request: OpenAI 128, Gemini 512, Anthropic strict about 20",
)
STRICT_TYPE = RefusalRule(
    "strict.type-required",
    "Strict mode needs a type on every node: an unconstrained value (or a boolean schema) cannot be written.",
    _doc("§2"),
    "schema must have a 'type' key",
)
STRICT_ARRAY_ITEMS = RefusalRule(
    "strict.array-items",
    "Every array needs an items schema.",
    _doc("§1"),
    "An array needs items",
)
STRICT_FREE_FORM = RefusalRule(
    "strict.free-form-object",
    "Strict mode closes every object: a free-form one cannot be written.",
    _doc("§13.5"),
    "cannot be written in Gemini parameters or in the OpenAI and Anthropic strict modes",
)
STRICT_REQUIRED_UNDECLARED = RefusalRule(
    "strict.required-undeclared",
    "`required` names a key `properties` does not declare; in a closed object it could never be sent.",
    _doc("§2"),
    "Every object is closed",
)
OPENAI_STRICT_LIMITS = RefusalRule(
    "openai.strict.size-limits",
    "OpenAI strict mode's size limits (properties, characters, nesting depth).",
    _doc("§2"),
    "Size limits (current)",
)
OPENAI_STRICT_FIRST_KEYS = RefusalRule(
    "openai.strict.any-of-first-keys",
    "Object members of one anyOf must not start with the same key, and no order of their properties "
    "gives each one a first key of its own.",
    _doc("§2"),
    "must not share identical first keys",
)
ANTHROPIC_STRICT_RECURSION = RefusalRule(
    "anthropic.strict.recursion",
    "Anthropic strict tool use supports no recursive schema.",
    _doc("§5"),
    "Not supported: recursive schemas",
)
ANTHROPIC_STRICT_OPTIONAL = RefusalRule(
    "anthropic.strict.optional-budget",
    "Anthropic strict tool use compiles a request's tools into one grammar: about 24 optional "
    "properties in all.",
    _doc("§5"),
    "about 20 strict tools and 24 optional properties",
)
GEMINI_TYPE = RefusalRule(
    "gemini.parameters.type-required",
    "Every node has a type (an unconstrained value, or a boolean schema, cannot be written).",
    _doc("§6"),
    "Every node has a type unless it uses a combinator",
)
GEMINI_ARRAY_ITEMS = RefusalRule(
    "gemini.parameters.array-items",
    "Every array needs an items schema.",
    _doc("§6"),
    "items: missing field",
)
GEMINI_FREE_FORM = RefusalRule(
    "gemini.parameters.free-form-object",
    "An object below the root needs non-empty properties.",
    _doc("§6"),
    "A nested free-form object cannot be written",
)
GEMINI_RECURSION = RefusalRule(
    "gemini.parameters.recursion",
    "parameters has no references (an unknown field), so a recursive schema cannot be written.",
    _doc("§6"),
    "Seen for additionalProperties, $schema, propertyNames, const, $ref, if",
)
GEMINI_PROPERTY_NAME = RefusalRule(
    "gemini.parameters.property-name",
    "A property name Gemini does not accept.",
    _doc("§6"),
    "Parameter (property) names start with a letter or underscore",
)
GEMINI_ENUM = RefusalRule(
    "gemini.parameters.enum",
    "An enum with no value parameters can express (it holds strings only).",
    _doc("§6"),
    "enum holds strings, on a type: string node only",
)
GEMINI_ONLY_NULL = RefusalRule(
    "gemini.parameters.only-null",
    "A schema admitting only null: parameters writes null as a flag on another type.",
    _doc("§6"),
    "null is written as nullable: true",
)
MOONSHOT_ENUM = RefusalRule(
    "moonshot.enum",
    "An enum admitting no value of its node's type (or none at all).",
    _doc("§8"),
    "an enum that is not a non-empty array of at most 1000 values matching the node's type",
)
MOONSHOT_REF_ENDS = RefusalRule(
    "moonshot.ref-never-ends",
    "A reference whose every required chain leads back to itself (or too many to follow).",
    _doc("§8"),
    "detected infinite recursion without termination condition",
)
MOONSHOT_ANY_OF_PARENT = RefusalRule(
    "moonshot.any-of-parent-keyword",
    "A keyword both on an anyOf parent and in a branch.",
    _doc("§8"),
    "a keyword (other than description/title) both on an anyOf parent and in a branch",
)
MOONSHOT_REF_PROPERTY = RefusalRule(
    "moonshot.ref-property-name",
    "A property literally named $ref breaks Moonshot's validator.",
    _doc("§8"),
    "A property literally named $ref breaks the validator",
)
MOONSHOT_RESERVED_PROPERTY = RefusalRule(
    "moonshot.reserved-property-name",
    "A property named required, additionalProperties, anyOf or $defs is refused by Moonshot's validator.",
    _doc("§8"),
    "No property is named `required`, `additionalProperties`, `anyOf` or `$defs`",
)

REFUSAL_RULES: dict[str, RefusalRule] = {
    rule.id: rule
    for rule in (
        NOT_JSON_SCHEMA,
        ROOT_NOT_OBJECT,
        ROOT_UNION,
        UNRESOLVABLE_REF,
        BUDGET_SPENT,
        UNKNOWN_DIALECT,
        PASS_ERROR,
        WIRE_ERROR,
        NO_TOOL,
        DUPLICATE_NAME,
        TOOL_CAP,
        STRICT_TYPE,
        STRICT_ARRAY_ITEMS,
        STRICT_FREE_FORM,
        STRICT_REQUIRED_UNDECLARED,
        OPENAI_STRICT_LIMITS,
        OPENAI_STRICT_FIRST_KEYS,
        ANTHROPIC_STRICT_RECURSION,
        ANTHROPIC_STRICT_OPTIONAL,
        GEMINI_TYPE,
        GEMINI_ARRAY_ITEMS,
        GEMINI_FREE_FORM,
        GEMINI_RECURSION,
        GEMINI_PROPERTY_NAME,
        GEMINI_ENUM,
        GEMINI_ONLY_NULL,
        MOONSHOT_ENUM,
        MOONSHOT_REF_ENDS,
        MOONSHOT_ANY_OF_PARENT,
        MOONSHOT_REF_PROPERTY,
        MOONSHOT_RESERVED_PROPERTY,
    )
}
"""Every refusal rule by id (a refusal names one of them)."""


def refusal_source(rule_id: str | None) -> str | None:
    """The source of a rule named by a refusal; None for no rule or one this version does not know
    (a record written by another version)."""
    rule = REFUSAL_RULES.get(rule_id) if rule_id else None
    return rule.source if rule else None
