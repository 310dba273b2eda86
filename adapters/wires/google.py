"""Google Gemini (`:generateContent` / `:streamGenerateContent`) through google-genai."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Awaitable
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from xpeval.adapters.contract import (
    AssistantMessage,
    FinishReason,
    ForceTool,
    JsonObject,
    ProviderError,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
    WireName,
)
from xpeval.adapters.schema import PreparedTools
from xpeval.adapters.wires._base import (
    Codec,
    RenderedResponse,
    ReplyAccumulator,
    body_model,
    retry_after_seconds,
    transport_error,
    validate_params,
)
from xpeval.adapters.wires._layout import ToolLayout
from xpeval.adapters.wires.catalog import AcceptanceMode, WirePlugin
from xpeval.adapters.wires.loop_rules import signature_bytes
from xpeval.adapters.wires.loop_rules.google import GOOGLE_GENAI
from xpeval.adapters.wires.loop_rules.google import RULES as REASONING_STATE
from xpeval.adapters.wires.render import google as rendering

WIRE_NAME: WireName = GOOGLE_GENAI
OPENAPI_DIALECT = "gemini-openapi"
"""The dialect whose schemas go in `parameters` (OpenAPI subset); others use `parametersJsonSchema`."""
_REST_FIELDS = {
    "parameters_json_schema": "parametersJsonSchema",
    "response_json_schema": "responseJsonSchema",
}
"""The SDK's snake_case members that the REST body names in camelCase."""
_SDK_FIELDS = {rest: sdk for sdk, rest in _REST_FIELDS.items()}

_MODEL_IN_PATH = re.compile(r"/models/([^/:?]+)")

_FINISH: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
}


def normalize_finish(raw: str | None, has_calls: bool) -> FinishReason | None:
    if raw is None:
        return "tool_calls" if has_calls else None
    if raw == "STOP" and has_calls:
        return "tool_calls"
    return _FINISH.get(raw, "other")


def _enum_value(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _signature(part: Any) -> str | None:
    signature = getattr(part, "thought_signature", None)
    if not signature:
        return None
    return base64.b64encode(signature).decode() if isinstance(signature, bytes) else str(signature)


def _usage(meta: Any) -> Usage | None:
    if meta is None:
        return None
    return Usage(
        input_tokens=getattr(meta, "prompt_token_count", None),
        output_tokens=getattr(meta, "candidates_token_count", None),
        total_tokens=getattr(meta, "total_token_count", None),
    )


class GeminiAccumulator(ReplyAccumulator):
    """Folds one response or a stream of chunks into a result.

    Gemini streams whole function calls (never argument fragments) and text in pieces; a
    plain response is a stream of one chunk.
    """

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ToolCall] = []
        self.text_signature: str | None = None
        self.prompt_block: str | None = None
        self.chunks_with_content = 0

    @property
    def terminal(self) -> bool:
        """A candidate's `finishReason` (or a blocked prompt) ends a Gemini stream."""
        return self.finish is not None or self.prompt_block is not None

    def add(self, chunk: Any) -> None:
        self.events += 1
        self.response_id = self.response_id or getattr(chunk, "response_id", None)
        self.model = self.model or getattr(chunk, "model_version", None)
        if getattr(chunk, "usage_metadata", None) is not None:
            self.usage = _usage(chunk.usage_metadata)
        feedback = getattr(chunk, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None) is not None:
            self.prompt_block = _enum_value(feedback.block_reason)
        candidates = getattr(chunk, "candidates", None) or []
        if not candidates:
            return
        self.chunks_with_content += 1
        candidate = candidates[0]
        content = getattr(candidate, "content", None)
        for part in (getattr(content, "parts", None) or []) if content is not None else []:
            self._add_part(part)
        if candidate.finish_reason is not None:
            self.finish = _enum_value(candidate.finish_reason)

    def _add_part(self, part: Any) -> None:
        call = getattr(part, "function_call", None)
        if call is not None:
            args = call.args
            arguments = args if isinstance(args, dict) else {}
            error = None if args is None or isinstance(args, dict) else "function call args are not an object"
            signature = _signature(part)
            self.calls.append(
                ToolCall(
                    id=call.id or None,
                    name=call.name or "",
                    arguments=arguments,
                    parse_error=error,
                    provider_data={"thought_signature": signature} if signature else {},
                )
            )
            return
        text = getattr(part, "text", None)
        if text is None:
            return
        if getattr(part, "thought", None):
            self.reasoning.append(text)
        else:
            self.text.append(text)
            self.text_signature = self.text_signature or _signature(part)

    def result(self, error: ProviderError | None = None) -> TurnResult:
        if error is None and not self.chunks_with_content and self.prompt_block is None:
            error = ProviderError(message="response has no candidates and no prompt feedback", kind="decode")
        finish = self.finish
        if finish is None and self.prompt_block is not None:
            finish = self.prompt_block
        data: JsonObject = {}
        if self.text_signature:
            data[WIRE_NAME] = {"text_thought_signature": self.text_signature}
        return self.reply(
            list(self.calls),
            "error"
            if error
            else (
                "content_filter"
                if self.finish is None and self.prompt_block
                else normalize_finish(finish, bool(self.calls))
            ),
            error,
            raw_finish_reason=finish,
            provider_data=data,
            status=200,
        )


def _decode_signature(value: str | None) -> bytes | None:
    """A kept signature as the bytes it stands for: standard and URL-safe base64 are both read
    (a plain `b64decode` silently drops `-` and `_`, and the provider compares bytes)."""
    return signature_bytes(value)


def _encode_contents(request: TurnRequest, tools: PreparedTools) -> tuple[str | None, list[JsonObject]]:
    system: list[str] = []
    contents: list[JsonObject] = []
    call_names: dict[str, str] = {}  # the name each call id went out under: its result answers by it
    for message in request.messages:
        if isinstance(message, SystemMessage):
            system.append(message.content)
        elif isinstance(message, UserMessage):
            contents.append({"role": "user", "parts": [{"text": message.content}]})
        elif isinstance(message, AssistantMessage):
            contents.append(
                {"role": "model", "parts": _model_parts(message, tools, call_names) or [{"text": ""}]}
            )
        elif isinstance(message, ToolResultMessage):
            _add_function_response(contents, _function_response(message, tools, call_names))
    return ("\n\n".join(system) if system else None), contents


def _model_parts(
    message: AssistantMessage, tools: PreparedTools, call_names: dict[str, str]
) -> list[JsonObject]:
    parts: list[JsonObject] = []
    if message.content:
        part: JsonObject = {"text": message.content}
        signature = _decode_signature(
            (message.provider_data.get(WIRE_NAME) or {}).get("text_thought_signature")
        )
        if signature:
            part["thought_signature"] = signature
        parts.append(part)
    for call in message.tool_calls:
        wire_name = tools.wire_name(call.name)
        function_call: JsonObject = {"name": wire_name, "args": call.arguments}
        if call.id:
            function_call["id"] = call.id
            call_names[call.id] = wire_name
        part = {"function_call": function_call}
        # Gemini 3 refuses a replayed call whose thought signature is missing.
        signature = _decode_signature(call.provider_data.get("thought_signature"))
        if signature:
            part["thought_signature"] = signature
        parts.append(part)
    return parts


def _function_response(
    message: ToolResultMessage, tools: PreparedTools, call_names: dict[str, str]
) -> JsonObject:
    name = call_names.get(message.tool_call_id or "", tools.wire_name(message.name))
    response: JsonObject = {
        "name": name,
        "response": {"error" if message.is_error else "result": message.content},
    }
    if message.tool_call_id:
        response["id"] = message.tool_call_id
    return {"function_response": response}


def _add_function_response(contents: list[JsonObject], part: JsonObject) -> None:
    """Consecutive tool results go back in one user turn of function responses."""
    last = contents[-1] if contents else None
    if last is not None and last["role"] == "user" and all("function_response" in p for p in last["parts"]):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})


@cache
def _contents_adapter() -> TypeAdapter[Any]:
    from google.genai import types

    return TypeAdapter(list[types.Content])


class GoogleGenAIWire(Codec):
    name: WireName = WIRE_NAME
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r":(stream)?[gG]enerateContent(\?|$)"),)
    reasoning_state = REASONING_STATE
    stream_end = "a candidate's finishReason"

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        system, contents = _encode_contents(request, tools)
        config: JsonObject = {"automatic_function_calling": {"disable": True}}
        if system is not None:
            config["system_instruction"] = system
        sent = tools.sent
        if sent:
            layout = self.tool_layout(tools.dialect, tools.strict)
            field = _SDK_FIELDS.get(layout.schema_field, layout.schema_field)
            declarations = []
            for tool in sent:
                declaration: JsonObject = {"name": tool.name, "description": tool.description}
                # Gemini wants parameters omitted (not an empty object) for argument-less functions.
                if tool.parameters.get("properties") or not layout.schema_optional:
                    declaration[field] = tool.parameters
                declarations.append(declaration)
            config["tools"] = [{"function_declarations": declarations}]
            choice = request.tool_choice
            if isinstance(choice, ForceTool):
                calling: JsonObject = {
                    "mode": "ANY",
                    "allowed_function_names": [tools.wire_name(choice.name)],
                }
            else:
                calling = {"mode": {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice]}
            config["tool_config"] = {"function_calling_config": calling}
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.max_output_tokens is not None:
            config["max_output_tokens"] = request.max_output_tokens
        return {"model": request.model, "contents": contents, "config": config, "stream": request.stream}

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        if dialect == OPENAPI_DIALECT:
            # docs/provider-schema-rules.md §6: an OpenAPI 3.0 subset, omitted for no arguments.
            return ToolLayout(
                (),
                "parameters",
                None,
                (),
                ("parametersJsonSchema",),
                schema_optional=True,
                semantics="openapi-3.0",
            )
        return ToolLayout((), "parametersJsonSchema", None, (), ("parameters",))

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        """google-genai takes snake_case declarations inside `config.tools[].function_declarations`
        and sends them camelCased (`parameters_json_schema` -> `parametersJsonSchema`)."""
        config: Any = kwargs.get("config")
        if hasattr(config, "model_dump"):
            config = config.model_dump(exclude_none=True)
        found: list[JsonObject] = []
        for tool in (config or {}).get("tools") or []:
            if hasattr(tool, "model_dump"):
                tool = tool.model_dump(exclude_none=True)
            for declaration in tool.get("function_declarations") or tool.get("functionDeclarations") or []:
                if hasattr(declaration, "model_dump"):
                    declaration = declaration.model_dump(exclude_none=True)
                found.append({_REST_FIELDS.get(key, key): value for key, value in declaration.items()})
        return found

    def validate_encoded(self, kwargs: JsonObject) -> None:
        from google.genai import types

        if not isinstance(kwargs.get("model"), str):
            raise ValueError("model must be a string")
        validate_params(_contents_adapter(), kwargs["contents"])
        types.GenerateContentConfig.model_validate(kwargs["config"])

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.models.generate_content(**_sdk_arguments(kwargs))

    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        opened: Awaitable[Any] = client.models.generate_content_stream(**_sdk_arguments(kwargs))
        return opened

    def accumulator(self) -> GeminiAccumulator:
        """A plain response folds as a stream of one chunk (`Codec.decode`)."""
        return GeminiAccumulator()

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        from google.genai import errors

        if isinstance(exc, errors.UnknownApiResponseError):
            return ProviderError(message=f"the response is not Gemini's JSON: {exc}", kind="decode")
        if not isinstance(exc, errors.APIError):
            return transport_error(exc)
        response = getattr(exc, "response", None)
        http_status = getattr(response, "status_code", None)
        headers = dict(getattr(response, "headers", None) or {})
        retry = retry_after_seconds(headers) or _retry_delay(exc.details)
        if http_status == 200:
            # An {"error": ...} chunk inside a 200 stream.
            return ProviderError(
                type=exc.status, message=exc.message or str(exc), retry_after=retry, kind="stream"
            )
        return ProviderError(
            status=http_status or exc.code,
            type=exc.status,
            message=exc.message or str(exc),
            retry_after=retry,
            kind="http",
        )

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        return ":streamGenerateContent" in url

    def recorded_model(self, url: str, body: JsonObject | None) -> str | None:
        # Gemini names the model in the path (`.../models/<model>:generateContent`), not the body.
        named = body_model(body)
        if named is not None:
            return named
        match = _MODEL_IN_PATH.search(url)
        return match.group(1) if match else None

    def replayable_response(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[dict[str, str], bytes]:
        """`:streamGenerateContent` without `alt=sse` answers one JSON array of chunks. The SDK
        always asks for `alt=sse`, so it only parses SSE frames: the same chunks re-framed as SSE
        are what it would have received."""
        if ":streamGenerateContent" not in url or "alt=sse" in url:
            return headers, body
        reframed = _sse_from_json_array(body)
        if reframed is None:
            return headers, body
        kept = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        return {**kept, "content-type": "text/event-stream"}, reframed

    def minimal_request(self, model: str) -> JsonObject:
        return {
            "model": model,
            "contents": "replay",
            "config": {"automatic_function_calling": {"disable": True}},
        }

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        return rendering.render(result, model=model, stream=stream)


def _sdk_arguments(kwargs: JsonObject) -> JsonObject:
    """The encoded arguments as the SDK's calls take them: whether to stream is the call's name."""
    return {k: v for k, v in kwargs.items() if k != "stream"}


def _sse_from_json_array(body: bytes) -> bytes | None:
    """The chunks of a JSON-array stream body as SSE frames; None when the body is no such array."""
    if not body.lstrip().startswith(b"["):
        return None
    try:
        chunks = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(chunks, list):
        return None
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n" for chunk in chunks)


def _retry_delay(details: Any) -> float | None:
    """RetryInfo.retryDelay ("30s") from a google.rpc error body."""
    error = details.get("error", details) if isinstance(details, dict) else None
    for detail in (error or {}).get("details", []) if isinstance(error, dict) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return float(delay[:-1])
            except ValueError:
                return None
    return None


WIRE = GoogleGenAIWire()
PLUGIN = WirePlugin(
    codec=WIRE,
    batch_api="xpeval.adapters.wires.batch.gemini:API",
    acceptance=(
        AcceptanceMode("gemini-parameters", "gemini-openapi"),
        AcceptanceMode("gemini-json-schema", "gemini-json-schema"),
    ),
)
"""The wire as `catalog.BUNDLED_WIRES` registers it; its acceptance modes are judged by the
checker's rule sets of the same names (`evals/acceptance/checker/rules/`)."""
