"""Berkeley Function Calling Leaderboard (BFCL) entries -> `Case`s.

Pure conversion; reading the installed package's data folder lives in `bfcl_data`.

Rules:
- BFCL's pseudo-types become JSON Schema types with the leaderboard's own table
  (`GORILLA_TO_OPENAPI`: dict->object, float->number, tuple->array, any->string, Java/JS
  names ...); a type the table does not know becomes string, and a property without a type
  gets string, as BFCL does. The mapping is applied at every depth (BFCL's own walk stops at
  two levels); everything else in the schema is kept verbatim.
- Categories map to ours: simple_python/live_simple -> simple, multiple/live_multiple ->
  multiple, parallel/live_parallel -> parallel, parallel_multiple/live_parallel_multiple ->
  parallel_multiple, irrelevance/live_irrelevance -> irrelevance, live_relevance -> relevance
  (any call passes, as in BFCL); the four multi_turn_* ->
  multi_turn, converted with an environment by `bfcl_multi_turn`.
- Categories whose scoring we cannot reproduce are refused with the reason (`NOT_IMPORTED`).
- An expected argument that is optional (`""` among its values) but absent from the tool's
  schema is dropped: no call may carry it (it is not in the schema), so the verdicts are the
  same with or without it.
- An entry that breaks a case rule (an expected argument missing from the schema, a required
  argument marked optional ...) is skipped with the reason, never silently dropped.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError

from xpeval.evals.cases.acceptable import OPTIONAL
from xpeval.evals.cases.loader import describe_validation_error
from xpeval.evals.cases.model import Case, Category
from xpeval.evals.cases.schema_root import root_properties

GORILLA_TO_JSON_SCHEMA: dict[str, str] = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}
"""BFCL's `constants/type_mappings.py::GORILLA_TO_OPENAPI` (the types its tools are sent with)."""

CATEGORY_MAP: dict[str, Category] = {
    "simple_python": "simple",
    "live_simple": "simple",
    "multiple": "multiple",
    "live_multiple": "multiple",
    "parallel": "parallel",
    "live_parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "live_parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
    "live_irrelevance": "irrelevance",
    "live_relevance": "relevance",
    "multi_turn_base": "multi_turn",
    "multi_turn_miss_func": "multi_turn",
    "multi_turn_miss_param": "multi_turn",
    "multi_turn_long_context": "multi_turn",
}

NOT_IMPORTED: dict[str, str] = {
    "simple_java": "every argument is a string of Java source that BFCL reads with its own type "
    "converter before comparing; xpeval does not read Java literals yet",
    "simple_javascript": "every argument is a string of JavaScript source that BFCL reads with its own "
    "type converter before comparing; xpeval does not read JavaScript literals yet",
    "memory": "agentic category: the model first fills a memory backend over earlier conversations, "
    "then the last answer is judged by exact match; xpeval's cases do not play such a loop yet "
    "(memory_vector also needs sentence-transformers and faiss)",
    "web_search": "agentic category: scored on the final answer after live web searches (recording "
    "it needs a search engine's key)",
    "format_sensitivity": "prompt-format study over other categories' entries, not cases of its own",
}

_WALK_KEYS = ("items", "additionalProperties")
_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")


class BfclConversionError(ValueError):
    """One BFCL entry that cannot become a case; the message says why."""


def convert_schema(node: Any, *, is_property: bool = False) -> Any:
    """A BFCL parameter schema as JSON Schema (see the module docstring); the input is not modified."""
    if not isinstance(node, dict):
        return copy.deepcopy(node)
    converted = {key: copy.deepcopy(value) for key, value in node.items()}
    declared = node.get("type")
    if isinstance(declared, str):
        converted["type"] = GORILLA_TO_JSON_SCHEMA.get(declared, "string")
    elif "type" not in node and is_property:
        converted["type"] = "string"
    if isinstance(node.get("properties"), dict):
        converted["properties"] = {
            name: convert_schema(schema, is_property=True) for name, schema in node["properties"].items()
        }
    for key in _WALK_KEYS:
        if isinstance(node.get(key), dict):
            converted[key] = convert_schema(node[key])
    for key in _LIST_KEYS:
        if isinstance(node.get(key), list):
            converted[key] = [convert_schema(item) for item in node[key]]
    return converted


def convert_function(function: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function document as a tool (`name`, `description`, JSON Schema `parameters`)."""
    parameters = convert_schema(function.get("parameters") or {})
    if not isinstance(parameters, dict):
        raise BfclConversionError(f"function {function.get('name')!r}: parameters are not an object")
    parameters["type"] = "object"  # BFCL sends every root as an object, whatever the file says
    return {
        "name": function.get("name"),
        "description": function.get("description") or "",
        "parameters": parameters,
    }


def convert_entry(entry: dict[str, Any], answer: dict[str, Any] | None, bfcl_category: str) -> Case:
    """One BFCL entry (and its possible answer) as a case, or `BfclConversionError` saying why not."""
    category = CATEGORY_MAP.get(bfcl_category)
    if category is None or category == "multi_turn":
        raise BfclConversionError(f"category {bfcl_category!r} is not imported")
    entry_id = str(entry.get("id", ""))
    question = entry.get("question")
    if not isinstance(question, list) or len(question) != 1 or not isinstance(question[0], list):
        raise BfclConversionError(f"{entry_id}: expected one turn of messages")
    try:
        tools = [convert_function(function) for function in entry.get("function") or []]
    except BfclConversionError as exc:
        raise BfclConversionError(f"{entry_id}: {exc}") from exc
    raw: dict[str, Any] = {
        "id": f"bfcl_{entry_id}",
        "category": category,
        "tools": tools,
        "messages": copy.deepcopy(question[0]),
        "expected": _expected(entry_id, answer, category, tools),
        "origin": f"bfcl:{entry_id}",
    }
    try:
        return Case.model_validate(raw)
    except ValidationError as exc:
        raise BfclConversionError(f"{entry_id}: {describe_validation_error(exc)}") from exc


def _expected(
    entry_id: str, answer: dict[str, Any] | None, category: Category, tools: list[dict[str, Any]]
) -> dict[str, Any]:
    if category == "irrelevance":
        return {"no_call": True}
    if category == "relevance":
        return {"any_call": True}  # BFCL passes any call that decodes; it lists no answer
    if answer is None or not isinstance(answer.get("ground_truth"), list):
        raise BfclConversionError(f"{entry_id}: no possible answer")
    calls = []
    for item in answer["ground_truth"]:
        if not isinstance(item, dict) or len(item) != 1:
            raise BfclConversionError(f"{entry_id}: a ground-truth call maps one function to its arguments")
        ((name, arguments),) = item.items()
        if not isinstance(arguments, dict):
            raise BfclConversionError(f"{entry_id}: arguments of {name!r} are not an object")
        properties = next((root_properties(t["parameters"]) for t in tools if t["name"] == name), {})
        kept = {
            key: copy.deepcopy(alternatives)
            for key, alternatives in arguments.items()
            if key in properties or not (isinstance(alternatives, list) and OPTIONAL in alternatives)
        }
        calls.append({"name": name, "arguments": kept})
    return {"no_call": False, "calls": calls}


__all__ = [
    "CATEGORY_MAP",
    "GORILLA_TO_JSON_SCHEMA",
    "NOT_IMPORTED",
    "BfclConversionError",
    "convert_entry",
    "convert_function",
    "convert_schema",
]
