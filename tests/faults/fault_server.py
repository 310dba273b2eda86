"""A loopback server that answers every request with one fault, in a wire's own framing.

Built on the emulator's HTTP server (real sockets, chunked streams flushed frame by frame),
it serves for each fault the bytes a broken provider, proxy or network would send: a stream
that ends cleanly without its wire's terminal event, an error frame inside a 200 stream, an
HTML page or an empty body with status 200, invalid JSON, a body cut in half, a connection cut
mid-stream, a 5xx. `FaultReply` serves one fault in the framing of whichever wire asks, so one
server can stand in for every provider of a CLI run.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import httpx2

from xpeval.adapters.contract import ProviderError, ToolCall, TurnResult, Usage, WireName
from xpeval.adapters.wires import RenderedResponse, Wire, get_wire
from xpeval.evals.cases import Case
from xpeval.evals.emulator import EmulatorServer, Reply

ANSWER = TurnResult(
    text="Converting 26.2 miles to kilometres for you now.",
    tool_calls=[
        ToolCall(
            id="call_1", name="convert_units", arguments={"value": 26.2, "from_unit": "mi", "to_unit": "km"}
        )
    ],
    usage=Usage(input_tokens=10, output_tokens=5, total_tokens=15),
)


def _frames_without_terminal(wire: WireName, frames: list[bytes]) -> list[bytes]:
    """The stream's frames with the wire's terminal marks taken out; it still ends cleanly."""
    if wire == "openai-chat":
        return [f for f in frames if b'"finish_reason":null' in f]
    if wire == "openai-responses":
        return [f for f in frames if not f.startswith(b"event: response.completed")]
    if wire == "anthropic-messages":
        return [f for f in frames if not f.startswith((b"event: message_delta", b"event: message_stop"))]
    if wire == "mistral-chat":  # a chunk with a finish_reason, then [DONE]
        return [f for f in frames if b'"finish_reason":null' in f]
    if wire == "cohere-chat":
        return [f for f in frames if not f.startswith(b"event: message-end") and b"[DONE]" not in f]
    if wire == "bedrock-converse":  # eventstream messages: messageStop is the terminal one
        return [f for f in frames if b"messageStop" not in f]
    out = []
    for frame in frames:  # Gemini: the finishReason inside a chunk is the only terminal mark
        document = json.loads(frame.removeprefix(b"data: ").strip())
        for candidate in document.get("candidates", []):
            candidate.pop("finishReason", None)
        out.append(b"data: " + json.dumps(document).encode() + b"\r\n\r\n")
    return out


def _stream_headers(wire: WireName) -> dict[str, str]:
    kind = "application/vnd.amazon.eventstream" if wire == "bedrock-converse" else "text/event-stream"
    return {"content-type": kind}


def _sse(frames: list[bytes]) -> RenderedResponse:
    return RenderedResponse(200, {"content-type": "text/event-stream"}, frames)


FaultMaker = Callable[[WireName, bool], Reply]


def _rendered(wire: WireName, stream: bool) -> RenderedResponse:
    return get_wire(wire).render(ANSWER, model="m", stream=stream)


def _no_terminal(wire: WireName, stream: bool) -> Reply:
    frames = _frames_without_terminal(wire, _rendered(wire, True).chunks)
    return Reply(raw=RenderedResponse(200, _stream_headers(wire), frames))


def _html(wire: WireName, stream: bool) -> Reply:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    return Reply(raw=RenderedResponse(200, {"content-type": "text/html"}, [page]))


def _empty(wire: WireName, stream: bool) -> Reply:
    content_type = "text/event-stream" if stream else "application/json"
    return Reply(raw=RenderedResponse(200, {"content-type": content_type}, [b""]))


def _invalid_json(wire: WireName, stream: bool) -> Reply:
    if not stream:
        return Reply(raw=RenderedResponse(200, {"content-type": "application/json"}, [b'{"id": "x", "choi']))
    if wire == "bedrock-converse":  # whole eventstream messages whose JSON payloads do not parse
        frames = [
            _eventstream_message(b"messageStart", b"{not json at all"),
            _eventstream_message(b"contentBlockDelta", b"[1, 2"),
        ]
        return Reply(raw=RenderedResponse(200, _stream_headers(wire), frames))
    event = {"anthropic-messages": b"event: message_start\n", "cohere-chat": b"event: message-start\n"}.get(
        wire, b""
    )
    return Reply(raw=_sse([event + b"data: {not json at all\n\n", event + b"data: [1, 2\n\n"]))


def _eventstream_message(event: bytes, payload: bytes) -> bytes:
    """One AWS eventstream message (docs/eventstream.md) of an event of this type."""
    headers = b"".join(
        struct.pack(">B", len(name)) + name + struct.pack(">BH", 7, len(value)) + value
        for name, value in (
            (b":event-type", event),
            (b":content-type", b"application/json"),
            (b":message-type", b"event"),
        )
    )
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _half_body(wire: WireName, stream: bool) -> Reply:
    rendered = _rendered(wire, stream)
    return Reply(raw=RenderedResponse(200, rendered.headers, [rendered.body[: len(rendered.body) // 2]]))


def _cut_connection(wire: WireName, stream: bool) -> Reply:
    return Reply(result=ANSWER, truncate_after=1)


def _server_error(wire: WireName, stream: bool) -> Reply:
    return Reply(result=TurnResult(error=ProviderError(status=503, message="overloaded", kind="http")))


def _error_frame(wire: WireName, stream: bool) -> Reply:
    return Reply.stream_error("the model is overloaded, try again later")


FAULTS: dict[str, FaultMaker] = {
    "no-terminal-event": _no_terminal,
    "html-200": _html,
    "empty-200": _empty,
    "invalid-json": _invalid_json,
    "half-body": _half_body,
    "connection-cut": _cut_connection,
    "503": _server_error,
    "error-frame-200": _error_frame,
}
STREAM_ONLY = frozenset({"no-terminal-event", "connection-cut", "error-frame-200"})
EXPECTED_KIND = {
    "no-terminal-event": {"truncated"},
    "html-200": {"decode"},
    "empty-200": {"decode"},
    "invalid-json": {"decode"},
    "half-body": {"decode", "truncated"},
    "connection-cut": {"connection", "truncated"},
    "503": {"http"},
    "error-frame-200": {"stream"},
}


def expected_kinds(fault: str) -> set[str]:
    """The error kinds a fault may end in: the same on every wire (a stream of
    frames that do not parse is a `decode` error on the bundled wires too, issue 32 point 1)."""
    return EXPECTED_KIND[fault]


@dataclass(frozen=True)
class FaultReply(Reply):
    """One fault, in the framing of the wire that asks (`EmulatorServer` picks it from the path),
    or of `wire` when given (Mistral's path is OpenAI Chat's: a server standing in for Mistral
    alone says so)."""

    fault: str = "no-terminal-event"
    wire: str | None = None

    def __post_init__(self) -> None:
        # What the server does beside the bytes (cut the connection after a frame) is the
        # fault's own, the same in every wire's framing: the server reads it from this reply.
        probe = FAULTS[self.fault]("openai-chat", True)
        if self.truncate_after is None:
            object.__setattr__(self, "truncate_after", probe.truncate_after)

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        wire = get_wire(self.wire) if self.wire is not None else wire
        return FAULTS[self.fault](wire.name, stream).rendered(wire, stream=stream)


@dataclass(frozen=True)
class PinnedReply(Reply):
    """A reply rendered by one wire whatever the path: a server standing in for Mistral alone
    (its path is OpenAI Chat's) says so."""

    wire: str = "mistral-chat"

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        return super().rendered(get_wire(self.wire), stream=stream)


class FaultEmulator:
    """The runner's emulator target, answering every request of every episode with one fault."""

    def __init__(self, server: EmulatorServer, fault: str, *, stream: bool, replies: int = 8) -> None:
        self.server = server
        self.fault = fault
        self.stream = stream
        self.replies = replies

    def upstream_for(self, case: Case, adapter_id: str) -> httpx2.AsyncBaseTransport:
        from xpeval.adapters.registry import effective_contract

        wire = effective_contract(adapter_id).wire
        reply = FAULTS[self.fault](wire, self.stream)
        return self.server.transport(self.server.script([reply] * self.replies))
