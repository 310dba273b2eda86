"""The plugin API: everything another package needs to add a wire or an adapter to xpeval.

    from xpeval.plugin import PLUGIN_API_VERSION, WirePlugin, DirectEntry, Provider, ...

A plugin wire is a `WirePlugin` (its codec, dialects and acceptance rules) named by an entry
point of the `xpeval.wires` group; an adapter is a `DirectEntry` or `WrapperEntry` named by an
entry point of `xpeval.adapters`. Both are validated before they are visible and refused with one
line when wrong. docs/plugin-api.md is the reference of every name here, docs/plugins.md the
walk-through. Only these names are the API: anything else under `xpeval` may change without
notice, these only with `PLUGIN_API_VERSION`.

Names are imported when first used (a plugin module that imports one pulls in only its module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

PLUGIN_API_VERSION = (1, 3)
"""(major, minor): a major step removes or changes a name; a minor one only adds. A plugin may
check `compatible("1.2")` and refuse to load otherwise. tests/plugin_api.snapshot.txt records the
names and signatures of each version (tests/test_plugin_api_snapshot.py)."""


def compatible(required: str, provided: tuple[int, int] = PLUGIN_API_VERSION) -> bool:
    """Whether a plugin written against plugin API `required` ("MAJOR.MINOR", or "MAJOR") can use
    the `provided` one: the same major (a major step removes or changes names) and at least the
    minor it requires (a minor step only adds them). A malformed `required` is a ValueError."""
    major, dot, minor = required.strip().partition(".")
    if not major.isdecimal() or (dot and not minor.isdecimal()):
        raise ValueError(f"plugin API version {required!r} is not MAJOR.MINOR (e.g. '1.2')")
    return int(major) == provided[0] and int(minor or 0) <= provided[1]


_EXPORTS = {
    # registering
    "WirePlugin": "xpeval.adapters.wires.catalog",
    "AcceptanceMode": "xpeval.adapters.wires.catalog",
    "WireError": "xpeval.errors",
    "register_wire": "xpeval.adapters.wires.catalog",
    "unregister_wire": "xpeval.adapters.wires.catalog",
    "wire_names": "xpeval.adapters.wires.catalog",
    "DirectEntry": "xpeval.adapters.registry",
    "WrapperEntry": "xpeval.adapters.registry",
    "RegistryError": "xpeval.errors",
    "register_adapter": "xpeval.adapters.registry",
    "unregister_adapter": "xpeval.adapters.registry",
    "Provider": "xpeval.adapters.providers._spec",
    "Capabilities": "xpeval.adapters.adapter",
    # building an adapter
    "Adapter": "xpeval.adapters.adapter",
    "AdapterSettings": "xpeval.adapters.adapter",
    "EffectiveContract": "xpeval.adapters.adapter",
    "async_http_client": "xpeval.adapters.providers._http",
    "http_transport": "xpeval.adapters.providers._http",
    # the canonical contract
    "AssistantMessage": "xpeval.adapters.contract",
    "FinishReason": "xpeval.adapters.contract",
    "ForceTool": "xpeval.adapters.contract",
    "JsonObject": "xpeval.adapters.contract",
    "Message": "xpeval.adapters.contract",
    "ProviderError": "xpeval.adapters.contract",
    "SystemMessage": "xpeval.adapters.contract",
    "ToolCall": "xpeval.adapters.contract",
    "ToolResultMessage": "xpeval.adapters.contract",
    "ToolSpec": "xpeval.adapters.contract",
    "TurnRequest": "xpeval.adapters.contract",
    "TurnResult": "xpeval.adapters.contract",
    "Usage": "xpeval.adapters.contract",
    "UserMessage": "xpeval.adapters.contract",
    # writing a codec
    "Wire": "xpeval.adapters.wires._base",
    "Codec": "xpeval.adapters.wires._base",
    "PendingCall": "xpeval.adapters.wires._base",
    "ReplyAccumulator": "xpeval.adapters.wires._base",
    "RenderedResponse": "xpeval.adapters.wires._base",
    "StreamAccumulator": "xpeval.adapters.wires._base",
    "BodyDescribedRequests": "xpeval.adapters.wires._base",
    "read_stream": "xpeval.adapters.wires._base",
    "parse_arguments": "xpeval.adapters.wires._base",
    "none_if_empty": "xpeval.adapters.wires._base",
    "retry_after_seconds": "xpeval.adapters.wires._base",
    "error_fields": "xpeval.adapters.wires._base",
    "transport_error": "xpeval.adapters.wires._base",
    "not_the_wire": "xpeval.adapters.wires._base",
    "ToolLayout": "xpeval.adapters.wires._layout",
    "wire_call_ids": "xpeval.adapters.wires._calls",
    "PreparedTools": "xpeval.adapters.schema",
    "json_response": "xpeval.adapters.wires.render._frames",
    "sse_frame": "xpeval.adapters.wires.render._frames",
    "sse_response": "xpeval.adapters.wires.render._frames",
    "text_pieces": "xpeval.adapters.wires.render._frames",
    "retry_after_header": "xpeval.adapters.wires.render._frames",
    "sent_in_stream": "xpeval.adapters.wires.render._frames",
    # a Batch API for `run --batch` (a WirePlugin's `batch_api`: docs/batch.md)
    "BatchApi": "xpeval.adapters.wires.batch._base",
    "BatchAnswer": "xpeval.adapters.wires.batch._base",
    "BatchLimits": "xpeval.adapters.wires.batch._base",
    "BatchRequest": "xpeval.adapters.wires.batch._base",
    "BatchStatus": "xpeval.adapters.wires.batch._base",
    "EmulatedBatch": "xpeval.adapters.wires.batch._base",
    "EmulatedService": "xpeval.adapters.wires.batch._base",
    "HttpAnswer": "xpeval.adapters.wires.batch._base",
    # reasoning state a wire's provider requires back (a codec's `reasoning_state`)
    "ReasoningStateRules": "xpeval.adapters.wires.loop_rules",
    "Mutation": "xpeval.adapters.wires.loop_rules",
    "FOREIGN": "xpeval.adapters.wires.loop_rules",
    "made_signature": "xpeval.adapters.wires.loop_rules",
    "paired": "xpeval.adapters.wires.loop_rules",
    "carried_state": "xpeval.adapters.wires.loop_rules",
    # a schema dialect
    "DialectSpec": "xpeval.adapters.schema.dialects",
    "NameRule": "xpeval.adapters.schema.names",
    "SchemaRules": "xpeval.adapters.schema._rules:Rules",
    "OpenAISchemaRules": "xpeval.adapters.schema._lenient:OpenAIRules",
    "AnthropicSchemaRules": "xpeval.adapters.schema._lenient:AnthropicRules",
    # acceptance rules
    "Profile": "xpeval.evals.acceptance.checker.keywords",
    "Rule": "xpeval.evals.acceptance.checker._types",
    "name_pattern": "xpeval.evals.acceptance.checker.keywords",
    "name_length": "xpeval.evals.acceptance.checker.keywords",
    "root_type_object": "xpeval.evals.acceptance.checker.keywords",
    "root_keywords_absent": "xpeval.evals.acceptance.checker.keywords",
    "meta_schema": "xpeval.evals.acceptance.checker.keywords",
    "array_needs_items": "xpeval.evals.acceptance.checker.keywords",
    "additional_properties_false": "xpeval.evals.acceptance.checker.keywords",
    "required_lists_every_property": "xpeval.evals.acceptance.checker.keywords",
    "keywords_absent": "xpeval.evals.acceptance.checker.keywords",
    "local_refs_only": "xpeval.evals.acceptance.checker.keywords",
    "refs_resolve": "xpeval.evals.acceptance.checker.keywords",
    "not_recursive": "xpeval.evals.acceptance.checker.keywords",
}

__all__ = sorted([*_EXPORTS, "PLUGIN_API_VERSION", "compatible"])

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.adapters.adapter import Adapter as Adapter
    from xpeval.adapters.adapter import AdapterSettings as AdapterSettings
    from xpeval.adapters.adapter import Capabilities as Capabilities
    from xpeval.adapters.adapter import EffectiveContract as EffectiveContract
    from xpeval.adapters.contract import AssistantMessage as AssistantMessage
    from xpeval.adapters.contract import FinishReason as FinishReason
    from xpeval.adapters.contract import ForceTool as ForceTool
    from xpeval.adapters.contract import JsonObject as JsonObject
    from xpeval.adapters.contract import Message as Message
    from xpeval.adapters.contract import ProviderError as ProviderError
    from xpeval.adapters.contract import SystemMessage as SystemMessage
    from xpeval.adapters.contract import ToolCall as ToolCall
    from xpeval.adapters.contract import ToolResultMessage as ToolResultMessage
    from xpeval.adapters.contract import ToolSpec as ToolSpec
    from xpeval.adapters.contract import TurnRequest as TurnRequest
    from xpeval.adapters.contract import TurnResult as TurnResult
    from xpeval.adapters.contract import Usage as Usage
    from xpeval.adapters.contract import UserMessage as UserMessage
    from xpeval.adapters.providers._http import async_http_client as async_http_client
    from xpeval.adapters.providers._http import http_transport as http_transport
    from xpeval.adapters.providers._spec import Provider as Provider
    from xpeval.adapters.registry import DirectEntry as DirectEntry
    from xpeval.adapters.registry import WrapperEntry as WrapperEntry
    from xpeval.adapters.registry import register_adapter as register_adapter
    from xpeval.adapters.registry import unregister_adapter as unregister_adapter
    from xpeval.adapters.schema import PreparedTools as PreparedTools
    from xpeval.adapters.schema._lenient import AnthropicRules, OpenAIRules
    from xpeval.adapters.schema._rules import Rules
    from xpeval.adapters.schema.dialects import DialectSpec as DialectSpec
    from xpeval.adapters.schema.names import NameRule as NameRule
    from xpeval.adapters.wires._base import BodyDescribedRequests as BodyDescribedRequests
    from xpeval.adapters.wires._base import Codec as Codec
    from xpeval.adapters.wires._base import PendingCall as PendingCall
    from xpeval.adapters.wires._base import RenderedResponse as RenderedResponse
    from xpeval.adapters.wires._base import ReplyAccumulator as ReplyAccumulator
    from xpeval.adapters.wires._base import StreamAccumulator as StreamAccumulator
    from xpeval.adapters.wires._base import Wire as Wire
    from xpeval.adapters.wires._base import error_fields as error_fields
    from xpeval.adapters.wires._base import none_if_empty as none_if_empty
    from xpeval.adapters.wires._base import not_the_wire as not_the_wire
    from xpeval.adapters.wires._base import parse_arguments as parse_arguments
    from xpeval.adapters.wires._base import read_stream as read_stream
    from xpeval.adapters.wires._base import retry_after_seconds as retry_after_seconds
    from xpeval.adapters.wires._base import transport_error as transport_error
    from xpeval.adapters.wires._calls import wire_call_ids as wire_call_ids
    from xpeval.adapters.wires._layout import ToolLayout as ToolLayout
    from xpeval.adapters.wires.batch._base import BatchAnswer as BatchAnswer
    from xpeval.adapters.wires.batch._base import BatchApi as BatchApi
    from xpeval.adapters.wires.batch._base import BatchLimits as BatchLimits
    from xpeval.adapters.wires.batch._base import BatchRequest as BatchRequest
    from xpeval.adapters.wires.batch._base import BatchStatus as BatchStatus
    from xpeval.adapters.wires.batch._base import EmulatedBatch as EmulatedBatch
    from xpeval.adapters.wires.batch._base import EmulatedService as EmulatedService
    from xpeval.adapters.wires.batch._base import HttpAnswer as HttpAnswer
    from xpeval.adapters.wires.catalog import AcceptanceMode as AcceptanceMode
    from xpeval.adapters.wires.catalog import WirePlugin as WirePlugin
    from xpeval.adapters.wires.catalog import register_wire as register_wire
    from xpeval.adapters.wires.catalog import unregister_wire as unregister_wire
    from xpeval.adapters.wires.catalog import wire_names as wire_names
    from xpeval.adapters.wires.loop_rules import FOREIGN as FOREIGN
    from xpeval.adapters.wires.loop_rules import Mutation as Mutation
    from xpeval.adapters.wires.loop_rules import ReasoningStateRules as ReasoningStateRules
    from xpeval.adapters.wires.loop_rules import carried_state as carried_state
    from xpeval.adapters.wires.loop_rules import made_signature as made_signature
    from xpeval.adapters.wires.loop_rules import paired as paired
    from xpeval.adapters.wires.render._frames import json_response as json_response
    from xpeval.adapters.wires.render._frames import retry_after_header as retry_after_header
    from xpeval.adapters.wires.render._frames import sent_in_stream as sent_in_stream
    from xpeval.adapters.wires.render._frames import sse_frame as sse_frame
    from xpeval.adapters.wires.render._frames import sse_response as sse_response
    from xpeval.adapters.wires.render._frames import text_pieces as text_pieces
    from xpeval.errors import RegistryError as RegistryError
    from xpeval.errors import WireError as WireError
    from xpeval.evals.acceptance.checker._types import Rule as Rule
    from xpeval.evals.acceptance.checker.keywords import Profile as Profile
    from xpeval.evals.acceptance.checker.keywords import (
        additional_properties_false as additional_properties_false,
    )
    from xpeval.evals.acceptance.checker.keywords import array_needs_items as array_needs_items
    from xpeval.evals.acceptance.checker.keywords import keywords_absent as keywords_absent
    from xpeval.evals.acceptance.checker.keywords import local_refs_only as local_refs_only
    from xpeval.evals.acceptance.checker.keywords import meta_schema as meta_schema
    from xpeval.evals.acceptance.checker.keywords import name_length as name_length
    from xpeval.evals.acceptance.checker.keywords import name_pattern as name_pattern
    from xpeval.evals.acceptance.checker.keywords import not_recursive as not_recursive
    from xpeval.evals.acceptance.checker.keywords import refs_resolve as refs_resolve
    from xpeval.evals.acceptance.checker.keywords import (
        required_lists_every_property as required_lists_every_property,
    )
    from xpeval.evals.acceptance.checker.keywords import root_keywords_absent as root_keywords_absent
    from xpeval.evals.acceptance.checker.keywords import root_type_object as root_type_object

    # exported under another name than their module's: an assignment is what mypy exports
    SchemaRules = Rules
    OpenAISchemaRules = OpenAIRules
    AnthropicSchemaRules = AnthropicRules
