"""`check(mode, definition)`: would this provider/mode accept this tool definition as sent?

An independent reading of `docs/provider-schema-rules.md`, deliberately not sharing code with the
dialect passes (`adapters/schema`): a pass and its judge written from one walker would agree on
their shared mistakes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from xpeval.evals.acceptance.checker._types import ProviderMode, Rule, Violation, violation
from xpeval.evals.acceptance.checker.keywords import Profile, SentTool
from xpeval.evals.acceptance.checker.layout import layout_for, layout_pointer, mode_of
from xpeval.evals.acceptance.checker.rules import PROFILES
from xpeval.evals.acceptance.checker.rules.common import ENVELOPE, MAX_JSON_DEPTH, NESTING
from xpeval.evals.acceptance.checker.walk import json_depth, walk

MAX_NODES = 50_000
"""Subschemas the checker looks at before it gives up on a definition (and says so)."""

TOOL_COUNT = {
    "openai": Rule(
        "openai.tool-count",
        "At most 128 entries in `tools`.",
        "[err] github.com/vishalmysore/Tools4AI/issues/16 (2024-05); "
        "github.com/zed-industries/zed/issues/42393",
    ),
    "gemini": Rule(
        "gemini.declaration-count",
        "At most 512 function declarations per request.",
        "[err] github.com/google-gemini/gemini-cli/issues/19083 (2026-02)",
    ),
}
_TOOL_CAPS: dict[ProviderMode, tuple[Rule, int]] = {
    "openai-chat": (TOOL_COUNT["openai"], 128),
    "openai-chat-strict": (TOOL_COUNT["openai"], 128),
    "openai-responses": (TOOL_COUNT["openai"], 128),
    "openai-responses-strict": (TOOL_COUNT["openai"], 128),
    "gemini-parameters": (TOOL_COUNT["gemini"], 512),
    "gemini-json-schema": (TOOL_COUNT["gemini"], 512),
}
TOO_LARGE = Rule(
    "schema.too-large",
    f"More than {MAX_NODES} subschemas: beyond what any provider documents, and beyond this checker.",
    '[err] github.com/bethington/ghidra-mcp/issues/440 ("too many states for serving")',
)


def _envelope(mode: ProviderMode, definition: Any) -> Iterator[Violation]:
    layout = layout_for(mode)
    if not isinstance(definition, dict):
        yield violation(ENVELOPE, "", "the tool definition is not a JSON object")
        return
    for key, value in layout.fixed:
        if definition.get(key) != value:
            yield violation(ENVELOPE, "/" + key, f"'{key}' must be {value!r}", key)
    inner = layout.inner(definition)
    if inner is None:
        yield violation(
            ENVELOPE, layout_pointer(layout), "the definition lacks its envelope", layout.envelope[0]
        )
        return
    if not isinstance(inner.get("name"), str):
        yield violation(ENVELOPE, layout_pointer(layout, "name"), "'name' must be a string", "name")
    if layout.schema_optional and layout.schema_field not in inner:
        pass
    elif not isinstance(inner.get(layout.schema_field), dict):
        yield violation(
            ENVELOPE,
            layout_pointer(layout, layout.schema_field),
            f"'{layout.schema_field}' must be an object",
            layout.schema_field,
        )
    for other in layout.exclusive_fields:
        if other in inner:
            yield violation(
                ENVELOPE,
                layout_pointer(layout, other),
                f"'{other}' cannot be set beside '{layout.schema_field}'",
                other,
            )
    if layout.strict is not None and inner.get("strict") is not layout.strict:
        yield violation(
            ENVELOPE, layout_pointer(layout, "strict"), f"this mode sends strict: {layout.strict}", "strict"
        )


def check(mode: ProviderMode, definition: Any) -> list[Violation]:
    """Every published rule of `mode` that `definition` (the tool exactly as sent) breaks.

    Never raises on a hostile definition: deep or huge schemas are walked iteratively and the
    checks that would recurse are skipped past `MAX_JSON_DEPTH` (itself a violation).
    """
    profile = _profile(mode)
    found = list(_envelope(mode, definition))
    layout = layout_for(mode)
    inner = layout.inner(definition)
    if inner is None:
        return found
    schema = inner.get(layout.schema_field)
    tool = SentTool(mode, layout, inner.get("name"), schema, json_depth(schema, MAX_JSON_DEPTH))
    for name_check in profile.name_checks:
        found.extend(name_check(tool))
    if schema is None and layout.schema_optional and layout.schema_field not in inner:
        return found
    if tool.json_depth > MAX_JSON_DEPTH:
        # Past this depth no provider documents acceptance; judging further would only cost time.
        message = f"exceeds the maximum allowed nesting depth (more than {MAX_JSON_DEPTH} JSON levels)"
        found.append(violation(NESTING, tool.at(), message))
        return found
    for tool_check in profile.tool_checks:
        found.extend(tool_check(tool))
    if not isinstance(schema, dict):
        return found
    for count, node in enumerate(walk(schema)):
        if count >= MAX_NODES:
            found.append(violation(TOO_LARGE, tool.at(), f"more than {MAX_NODES} subschemas"))
            break
        for node_check in profile.node_checks:
            found.extend(node_check(tool, node))
    return found


def _profile(mode: ProviderMode) -> Profile:
    """The rules of `mode`: its `AcceptanceMode.profile`, or for one of xpeval's own wires that
    leaves it None, the checker's own rule set of that name (`rules/`)."""
    _, spec = mode_of(mode)
    profile = PROFILES.get(mode) if spec.profile is None else spec.profile
    if not isinstance(profile, Profile):
        raise ValueError(f"provider mode {mode!r} has no rules (no Profile: adapters/wires/RULES.md)")
    return profile


def _tool_cap(mode: ProviderMode) -> tuple[Rule, int] | None:
    _, spec = mode_of(mode)
    if spec.profile is None:
        return _TOOL_CAPS.get(mode)
    if spec.max_tools is None:
        return None
    return spec.max_tools_rule, spec.max_tools


def check_request(mode: ProviderMode, definitions: Sequence[Any]) -> list[Violation]:
    """`check` for every tool of one request (pointers under /tools/<i>) plus the request's own
    limits (how many tools a request may carry)."""
    found: list[Violation] = []
    for index, definition in enumerate(definitions):
        for item in check(mode, definition):
            found.append(item.model_copy(update={"pointer": f"/tools/{index}{item.pointer}"}))
    cap = _tool_cap(mode)
    if cap is not None and len(definitions) > cap[1]:
        found.append(
            violation(
                cap[0],
                "/tools",
                f"array too long. Expected an array with maximum length {cap[1]}, but got an array with "
                f"length {len(definitions)} instead",
                "tools",
            )
        )
    return found
