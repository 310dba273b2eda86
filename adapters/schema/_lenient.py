"""Dialects that keep the schema as JSON Schema and change only what their provider refuses.

Sections are those of docs/provider-schema-rules.md.

- openai (Chat Completions, non-strict; §1): the root is an object; every object has
  `properties` and every array `items` (adding `{}` costs nothing, beside `prefixItems` too: the
  elements after the tuple stay any value).
- anthropic (Messages, non-strict; §4): the root is an object and carries no `oneOf`/`anyOf`/
  `allOf`; the rest passes as any valid 2020-12 schema.
- gemini-json-schema (`parametersJsonSchema`; §7): every `$ref` resolves, and only
  `description`/`default` may sit beside one (other siblings move under an `allOf` beside the
  reference, which means the same); `if`/`then`/`else` are refused.
"""

from __future__ import annotations

from typing import Any

from xpeval.adapters.schema import refusals as R
from xpeval.adapters.schema._engine import Engine
from xpeval.adapters.schema._rules import Rules, copy_node, root_object
from xpeval.adapters.schema._vocab import type_set
from xpeval.adapters.schema._walk import Refused, Task, View
from xpeval.adapters.schema._wellformed import check_common


class OpenAIRules(Rules):
    name = "openai"
    label = "OpenAI (non-strict)"

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        check_common(e, view)
        if task.root:
            root_object(e, view)
        out: dict[str, Any] = {}
        copy_node(e, view, task, out)
        types = type_set(out.get("type"))
        if types is not None:
            # "object schema missing properties" / "array schema missing items" (docs/provider-schema-rules.md
            # §1)
            if "object" in types and "properties" not in out:
                out["properties"] = {}
            if "array" in types and "items" not in out:
                out["items"] = {}
        return out


class AnthropicRules(Rules):
    name = "anthropic"
    label = "Anthropic"
    flatten_root_allof = True
    resolve_root_unions = True


_GEMINI_REF_SIBLINGS = frozenset({"$ref", "description", "default"})
_GEMINI_REFUSED = ("if", "then", "else")


class GeminiJsonSchemaRules(Rules):
    name = "gemini-json-schema"
    label = "Gemini parametersJsonSchema"
    refs_must_resolve = True

    def shape(self, e: Engine, view: View, task: Task) -> Any:
        check_common(e, view)
        kw = view.kw
        if task.root:
            root_object(e, view)
            kw = view.kw
        for key in _GEMINI_REFUSED:
            if key in kw:
                del kw[key]
                e.loss(view.at(key), key, "dropped", "Gemini refuses if/then/else (§7)")
        ref = kw.get("$ref")
        wrap = ref is not None and not set(kw) <= _GEMINI_REF_SIBLINGS
        if ref is not None:
            if e.resolve(ref) is None:
                raise Refused(R.UNRESOLVABLE_REF, e.unresolvable_reason(ref, task))
            if wrap:
                del kw["$ref"]
        out: dict[str, Any] = {}
        copy_node(e, view, task, out)
        if wrap:
            # "$ref was set alongside unsupported fields": the reference moves into an allOf
            # member, where it means the same (2020-12 applies $ref in place, like allOf)
            members = out.setdefault("allOf", [])
            members.append({"$ref": ref})
        return out
