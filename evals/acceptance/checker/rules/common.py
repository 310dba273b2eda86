"""Rules every mode shares: the definition must have the provider's shape at all."""

from __future__ import annotations

from xpeval.evals.acceptance.checker._types import Rule

ENVELOPE = Rule(
    "definition.shape",
    "The tool definition has the mode's fields: a string name and an object schema in the field the "
    "mode reads (and no mutually exclusive schema field).",
    "[doc] request shapes in docs/provider-schema-rules.md §1, §3, §4, §6, §7",
)
NESTING = Rule(
    "schema.nesting-depth",
    "Providers cap how deep a tool schema may nest (Gemini's cap is not published); beyond 512 JSON "
    "levels no provider documents accepting it, and this checker reports instead of judging further.",
    '[err] github.com/google-gemini/gemini-cli/issues/6031 ("exceeds the maximum allowed nesting '
    'depth"); [doc] OpenAI strict nesting depth <= 10 (docs/provider-schema-rules.md §2)',
)
MAX_JSON_DEPTH = 512
