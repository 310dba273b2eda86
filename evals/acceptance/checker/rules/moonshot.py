"""Moonshot / Kimi: "Moonshot-flavoured JSON Schema" on the Chat Completions wire
(docs/provider-schema-rules.md §8).

Every refusal reads `tools.function.parameters is not a valid moonshot flavored json schema,
details: <At path '<path>': <reason>>`; the messages below reuse the provider's reasons.
"""

from __future__ import annotations

from collections.abc import Iterator

from xpeval.evals.acceptance.checker import keywords
from xpeval.evals.acceptance.checker._types import ProviderMode, Rule, Violation, violation
from xpeval.evals.acceptance.checker.keywords import Profile, SentTool
from xpeval.evals.acceptance.checker.rules import _mfjs

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
ANY_OF_PARENT_TYPE = Rule(
    "moonshot.any-of-parent-type",
    "When using anyOf, type is defined in the anyOf items instead of the parent schema.",
    "[err] github.com/MoonshotAI/kimi-cli/issues/2531; github.com/FTShare-Lab/FTShare-MCP/issues/7; "
    "github.com/openJiuwen-ai/jiuwenswarm/issues/3942; " + _mfjs.SOURCE,
)
REF_TYPE = Rule(
    "moonshot.ref-with-type",
    "When using $ref, type is defined in the referenced schema instead of the parent schema.",
    "[err] github.com/router-for-me/CLIProxyAPI/issues/5316 (2026-08); " + _mfjs.SOURCE,
)
REF_SIBLINGS = Rule(
    "moonshot.ref-with-siblings",
    "A keyword beside a $ref is not also in the referenced schema (description and title may be).",
    "[err] github.com/MoonshotAI/kimi-cli/issues/2061 (2026-04, before walle allowed repeated "
    "annotations at lite and strict); " + _mfjs.SOURCE + "; docs/provider-schema-rules.md §8",
)
REF_ROOT_DEFS = Rule(
    "moonshot.ref-root-defs",
    "References are '#' or point into the root $defs (#/$defs/<name>) and resolve there.",
    "[err] github.com/CommandCodeAI/command-code/issues/566 (2026-07); "
    "github.com/anomalyco/opencode/issues/27054; " + _mfjs.SOURCE,
)
REF_STRING = Rule(
    "moonshot.ref-must-be-string",
    "$ref must be a string (a property literally named $ref breaks the validator).",
    "[err] github.com/pydantic/logfire/issues/2191 (2026-08); " + _mfjs.SOURCE,
)
_BY_ID = {rule.id: rule for rule in (ANY_OF_PARENT_TYPE, REF_TYPE, REF_SIBLINGS, REF_ROOT_DEFS, REF_STRING)}


def _walle_strict(tool: SentTool) -> Iterator[Violation]:
    """What Moonshot's validator refuses at the level its server requires (`_mfjs`)."""
    if not isinstance(tool.schema, dict):
        return
    problem = _mfjs.first_problem(tool.schema)
    if problem is not None:
        rule = problem.rule if isinstance(problem.rule, Rule) else _BY_ID[problem.rule]
        yield violation(rule, tool.at(problem.tokens), problem.message, problem.keyword)


def _name(tool: SentTool) -> Iterator[Violation]:
    if not isinstance(tool.name, str) or not tool.name or tool.name[0].isdigit():
        yield violation(
            NAME_DIGIT, tool.name_pointer, f"tool name {tool.name!r} must not start with a digit", "name"
        )


PROFILES: dict[ProviderMode, Profile] = {
    "moonshot": Profile(
        name_checks=(_name,),
        tool_checks=(keywords.root_type_object(ROOT_OBJECT), _walle_strict),
        node_checks=(),
    )
}
