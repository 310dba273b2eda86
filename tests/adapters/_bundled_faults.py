"""Loopback replies for the three bundled wires (Bedrock Converse, Cohere v2 chat, Mistral chat):
a good answer rendered by the wire's own renderer with one frame broken, an answer whose
arguments are not an object, an in-stream error; and the environment that points each adapter's
SDK at a loopback server. Built here, never recorded from a provider."""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

from xpeval.adapters.contract import ProviderError, ToolCall, TurnResult, Usage
from xpeval.adapters.wires import RenderedResponse, Wire, get_wire
from xpeval.evals.emulator import Reply

BUNDLED = ("bedrock-converse", "cohere", "mistral")
"""The adapter ids of the three bundled wires."""
CASE = "calc_simple_01"
ANSWER = TurnResult(
    text="Converting now.",
    tool_calls=[
        ToolCall(
            id="call_1", name="convert_units", arguments={"value": 26.2, "from_unit": "mi", "to_unit": "km"}
        )
    ],
    usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15),
)


def loopback_environment(url: str) -> dict[str, str]:
    """Every bundled adapter's SDK pointed at `url`, with keys no provider issued."""
    return {
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": url,
        "AWS_BEARER_TOKEN_BEDROCK": "loopback-bedrock-token",
        "CO_API_URL": url,
        "CO_API_KEY": "loopback-cohere-key",
        "MISTRAL_BASE_URL": url,
        "MISTRAL_API_KEY": "loopback-mistral-key",
    }


def bundled_wire(wire: Wire) -> Wire:
    """The bundled wire a loopback request is for: Mistral's path is OpenAI Chat's (Mistral's
    wire is told by its host), and no other wire's adapter runs against these servers."""
    return get_wire("mistral-chat") if wire.name == "openai-chat" else wire


def eventstream_frame(event_type: str, payload: bytes, message_type: str = "event") -> bytes:
    """One AWS eventstream frame with both checksums right, whatever its payload."""
    headers = b""
    for name, value in (
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", message_type),
    ):
        headers += (
            bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
        )
    prelude = struct.pack(">II", 12 + len(headers) + len(payload) + 4, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


BROKEN_FRAMES = {
    "bedrock-converse": eventstream_frame("contentBlockDelta", b"{not json"),
    "cohere-chat": b"event: content-delta\ndata: {not json\n\n",
    "mistral-chat": b"data: {not json\n\n",
}
"""One frame each wire's SDK cannot decode: botocore reads the payload as `{"message": ...}`,
Cohere's SDK logs and skips the event, Mistral's SDK raises."""
UNKNOWN_EVENT = eventstream_frame("surpriseEvent", b'{"p": "abc"}')
"""A well-formed frame of an event type ConverseStream does not have: botocore yields nothing for it."""


def with_frame(chunks: list[bytes], frame: bytes) -> list[bytes]:
    """`chunks` with `frame` after the first one (the answer still ends with its terminal event)."""
    return [chunks[0], frame, *chunks[1:]]


@dataclass(frozen=True)
class BrokenFrameReply(Reply):
    """A good streamed answer in the asking wire's framing, with one frame it cannot decode."""

    frame: bytes | None = None

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        bundled = bundled_wire(wire)
        good = bundled.render(ANSWER, model=self.model, stream=True)
        frame = self.frame if self.frame is not None else BROKEN_FRAMES[bundled.name]
        return RenderedResponse(good.status, good.headers, with_frame(good.chunks, frame))


@dataclass(frozen=True)
class StreamErrorReply(Reply):
    """An error frame inside a 200 stream, of the asking wire's own throttling type."""

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        bundled = bundled_wire(wire)
        kind = {"bedrock-converse": "throttlingException", "mistral-chat": "rate_limited"}.get(bundled.name)
        error = ProviderError(type=kind, message="slow down, too many requests", kind="stream")
        return bundled.render(TurnResult(error=error), model=self.model, stream=True)


def bedrock_plain_answer(tool_input: object) -> Reply:
    """A Converse (not streamed) answer whose one toolUse carries `tool_input` as its input."""
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "tooluse_1", "name": "convert_units", "input": tool_input}}
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
    }
    return Reply(raw=RenderedResponse(200, {"content-type": "application/json"}, [json.dumps(body).encode()]))


@dataclass(frozen=True)
class AnswerReply(Reply):
    """The right answer, in the asking bundled wire's framing."""

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        return bundled_wire(wire).render(ANSWER, model=self.model, stream=stream)


def bedrock_stream_cassette(frames: int) -> str:
    """A recorded ConverseStream episode (vcrpy YAML) of `frames` text deltas of 12 characters
    between its start and its terminal events: 100,000 of them are a 16 MB body, a 24 MB file."""

    def event(kind: str, payload: object) -> bytes:
        return eventstream_frame(kind, json.dumps(payload).encode())

    delta = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "twelve chars"}})
    body = b"".join(
        [
            event("messageStart", {"role": "assistant"}),
            delta * frames,
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "end_turn"}),
            event(
                "metadata", {"usage": {"inputTokens": 1, "outputTokens": frames, "totalTokens": frames + 1}}
            ),
        ]
    )
    request = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    interaction = {
        "request": {
            "body": json.dumps(request),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
        },
        "response": {
            "body": {"string": body},
            "headers": {"content-type": ["application/vnd.amazon.eventstream"]},
            "status": {"code": 200, "message": "OK"},
        },
    }
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's: the Python one takes half a minute
    return str(yaml.dump({"interactions": [interaction], "version": 1}, Dumper=dumper))


@dataclass(frozen=True)
class RechunkedReply(Reply):
    """The right answer as a ConverseStream, its bytes sent in pieces of `size` that split its
    frames anywhere, and cut `cut` bytes short of its end."""

    size: int = 7
    cut: int = 0

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        good = bundled_wire(wire).render(ANSWER, model=self.model, stream=True)
        body = good.body[: len(good.body) - self.cut]
        return RenderedResponse(
            good.status, good.headers, [body[i : i + self.size] for i in range(0, len(body), self.size)]
        )
