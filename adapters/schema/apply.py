"""`apply_dialect(dialect, schema)`: one tool's parameters schema rewritten for one dialect."""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._gemini_openapi import GeminiOpenAPIRules
from xpeval.adapters.schema._lenient import AnthropicRules, GeminiJsonSchemaRules, OpenAIRules
from xpeval.adapters.schema._moonshot import MoonshotRules
from xpeval.adapters.schema._rules import Rules
from xpeval.adapters.schema._strict import AnthropicStrictRules, OpenAIStrictRules
from xpeval.adapters.schema._types import Dialect, PassResult
from xpeval.adapters.schema._walk import DEFAULT_BUDGETS, Budgets

RULES: dict[Dialect, Rules] = {
    "openai": OpenAIRules(),
    "openai-strict": OpenAIStrictRules(),
    "anthropic": AnthropicRules(),
    "anthropic-strict": AnthropicStrictRules(),
    "gemini-openapi": GeminiOpenAPIRules(),
    "gemini-json-schema": GeminiJsonSchemaRules(),
    "moonshot": MoonshotRules(),
}


def apply_dialect(dialect: Dialect, schema: Any, *, budgets: Budgets = DEFAULT_BUDGETS) -> PassResult:
    """Rewrite `schema` (a tool's parameters) into what `dialect`'s provider accepts.

    Pure: the input is never modified (the output may share literal values such as enum
    members with it). Never raises for any input value: a schema that cannot be expressed is a
    `PassResult` with `refusal` set, every constraint the rewrite weakened is a `Loss`."""
    rules = RULES.get(dialect)
    if rules is None:
        return PassResult(refusal=f"unknown schema dialect: {dialect!r}", refusal_rule=R.UNKNOWN_DIALECT.id)
    return Engine(rules, schema, budgets).run()
