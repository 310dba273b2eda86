"""A recorded stream body as its JSON frames, and the text those frames spell together.

A streamed answer arrives in frames, each carrying a fragment of the text: one frame's
`...delta.content` is "planted-ab", the next one's is "cd12...". A secret the provider echoes
can therefore be split across frames, whole in what the client reassembles and whole in no
frame. This module knows only the framings streaming wires use (server-sent events' `data:`
lines, newline-delimited JSON, a JSON array of chunks, AWS eventstream's binary messages),
never a wire's fields: the text a stream spells is, for each JSON path, the fragments found at
that path frame after frame (`channels`). A frame whose fragment changes is written again; the
others keep their bytes.

AWS eventstream (docs/eventstream.md) frames each message with its own lengths and CRC32
checksums, so a frame cannot be edited in place as text: a changed message is encoded again
(`_EventMessage.encode`), its lengths and both checksums computed anew, and a message whose
checksum was already wrong when recorded stays wrong (a corrupt frame is evidence, not
something scrubbing may repair). Its headers' string and byte values are exposed too
(`scrub_each`), since an error message travels in a header.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

JsonPath = tuple[str | int, ...]
"""Where a string sits in a frame's JSON document (keys and list indices)."""


@dataclass(frozen=True)
class Fragment:
    frame: int
    path: JsonPath
    text: str


@dataclass
class StreamBody:
    """The frames of one body and where each sits in it."""

    body: bytes
    documents: list[Any]
    spans: list[tuple[int, int]]
    """Each frame's byte range in `body` (an array body: the whole body, for every frame)."""
    array: bool = False
    changed: set[int] = field(default_factory=set)
    messages: list[_EventMessage] | None = None
    """AWS eventstream's messages (None for the text framings), one per document."""
    tail: bytes = b""
    """What follows the last whole eventstream message (a stream cut mid-message)."""

    @property
    def checksummed(self) -> bool:
        """Whether the framing carries lengths and checksums: no byte of it may be replaced
        outside `scrub_each` and `render`."""
        return self.messages is not None

    @classmethod
    def parse(cls, body: bytes) -> StreamBody | None:
        """The frames of a streamed body: AWS eventstream messages, server-sent events with a
        JSON `data:` line (one is a stream, cut after its first frame), a JSON array of chunks,
        or two or more lines of JSON; None for anything else (a plain response is one document,
        not frames)."""
        if is_eventstream(body):
            return _eventstream(body)
        if body.lstrip()[:1] == b"[":
            return _array(body)
        sse = _is_sse(body)
        spans = list(_sse_payloads(body)) if sse else list(_lines(body))
        documents, kept = [], []
        for start, end in spans:
            document = _json(body[start:end])
            if isinstance(document, (dict, list)):
                documents.append(document)
                kept.append((start, end))
        return cls(body, documents, kept) if len(documents) > (0 if sse else 1) else None

    def channels(self) -> dict[JsonPath, list[Fragment]]:
        """For each JSON path, the strings found at it, frame after frame."""
        found: dict[JsonPath, list[Fragment]] = {}
        for index, document in enumerate(self.documents):
            for path, text in _strings(document):
                found.setdefault(path, []).append(Fragment(index, path, text))
        return found

    def replace(self, fragment: Fragment, text: str) -> None:
        node = self.documents[fragment.frame]
        for step in fragment.path[:-1]:
            node = node[step]
        node[fragment.path[-1]] = text
        self.changed.add(fragment.frame)

    def scrub_each(self, text: Callable[[str], str], data: Callable[[bytes], bytes]) -> None:
        """Every string of every eventstream message through `text` (its JSON payload's strings,
        its string headers) and every other byte of content through `data` (a payload that is
        not JSON, byte-array headers, each payload as written again): the whole-value scrub a
        checksummed framing cannot take on its raw bytes."""
        if self.messages is None:
            return
        for index, message in enumerate(self.messages):
            for path, value in list(_strings(self.documents[index])):
                cleaned = text(value)
                if cleaned != value:
                    self.replace(Fragment(index, path, value), cleaned)
            if message.scrub(text, data, self._payload(index)):
                self.changed.add(index)
        self.tail = data(self.tail)

    def _payload(self, index: int) -> bytes:
        """An eventstream message's payload as it now stands: its JSON written again once changed."""
        assert self.messages is not None
        document = self.documents[index]
        if index in self.changed and isinstance(document, (dict, list)):
            return _dumps(document)
        return self.messages[index].payload

    def render(self) -> bytes:
        """The body with every changed frame written again (compact JSON), the rest as it was."""
        if self.messages is not None:
            return self._render_eventstream()
        if not self.changed:
            return self.body
        if self.array:
            return json.dumps(self.documents, ensure_ascii=False, separators=(",", ":")).encode()
        out, position = [], 0
        for index, (start, end) in enumerate(self.spans):
            if index in self.changed:
                out += [self.body[position:start], _dumps(self.documents[index])]
                position = end
        out.append(self.body[position:])
        return b"".join(out)

    def _render_eventstream(self) -> bytes:
        assert self.messages is not None
        out = []
        for index, ((start, end), message) in enumerate(zip(self.spans, self.messages, strict=True)):
            if index in self.changed:
                out.append(message.encode(message.payload if message.scrubbed else self._payload(index)))
            else:
                out.append(self.body[start:end])
        return b"".join(out) + self.tail


def _dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _array(body: bytes) -> StreamBody | None:
    document = _json(body)
    if not isinstance(document, list) or not document:
        return None
    return StreamBody(body, document, [(0, len(body))] * len(document), array=True)


def _is_sse(body: bytes) -> bool:
    return body.startswith(b"data:") or b"\ndata:" in body


def _line_spans(body: bytes) -> Iterator[tuple[int, int]]:
    start = 0
    while start < len(body):
        end = body.find(b"\n", start)
        end = len(body) if end == -1 else end
        stop = end - 1 if end > start and body[end - 1 : end] == b"\r" else end
        yield start, stop
        start = end + 1


def _sse_payloads(body: bytes) -> Iterator[tuple[int, int]]:
    """The byte range of each `data:` line's payload (one optional space after the colon)."""
    for start, end in _line_spans(body):
        if body.startswith(b"data:", start, end):
            payload = start + 5
            yield (payload + 1 if body[payload : payload + 1] == b" " else payload), end


def _lines(body: bytes) -> Iterator[tuple[int, int]]:
    for start, end in _line_spans(body):
        if body[start:end].strip():
            yield start, end


def _strings(document: Any) -> Iterator[tuple[JsonPath, str]]:
    """Every string value of a JSON document with its path, in document order (iteratively)."""
    stack: list[tuple[JsonPath, Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if path:
                yield path, value
        elif isinstance(value, dict):
            stack.extend(((*path, key), item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in reversed(list(enumerate(value))))


# --- AWS eventstream (docs/eventstream.md) ------------------------------------------------------

_PRELUDE = 12
"""Total length (4 bytes), headers length (4), the CRC32 of those 8 bytes (4); all big-endian."""
_MESSAGE_CRC = 4
"""The message ends with the CRC32 of everything before it."""
_STRING, _BYTES = 7, 6
"""Header value types with a 2-byte length before the value."""
_FIXED_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
"""Header value types of a fixed size: true, false, byte, short, integer, long, timestamp, UUID."""


@dataclass
class _Header:
    name: bytes
    kind: int
    value: bytes

    def encode(self) -> bytes:
        sized = struct.pack(">H", len(self.value)) if self.kind in (_STRING, _BYTES) else b""
        return (
            struct.pack(">B", len(self.name)) + self.name + struct.pack(">B", self.kind) + sized + self.value
        )


@dataclass
class _EventMessage:
    headers: list[_Header]
    payload: bytes
    intact: bool
    """Whether its message checksum matched when read: a message that was corrupt stays so."""
    scrubbed: bool = False
    """Whether `payload` is final (`scrub` ran)."""

    def scrub(self, text: Callable[[str], str], data: Callable[[bytes], bytes], payload: bytes) -> bool:
        """Its headers' values and `payload` (its payload as it now stands) scrubbed; whether
        anything changed."""
        self.scrubbed = True
        changed = payload != self.payload
        for header in self.headers:
            if header.kind == _STRING:
                value = text(header.value.decode("utf-8", "surrogateescape")).encode(
                    "utf-8", "surrogateescape"
                )
            elif header.kind == _BYTES:
                value = data(header.value)
            else:
                continue
            if value != header.value:
                header.value, changed = value, True
        cleaned = data(payload)
        if cleaned != self.payload:
            self.payload, changed = cleaned, True
        return changed

    def encode(self, body: bytes) -> bytes:
        """The message holding `body`, its lengths and both checksums computed for it."""
        head = b"".join(header.encode() for header in self.headers)
        lengths = struct.pack(">II", _PRELUDE + len(head) + len(body) + _MESSAGE_CRC, len(head))
        message = lengths + struct.pack(">I", zlib.crc32(lengths)) + head + body
        checksum = zlib.crc32(message) ^ (0 if self.intact else 0xFFFFFFFF)
        return message + struct.pack(">I", checksum)


def is_eventstream(body: bytes) -> bool:
    """Whether `body` starts with an eventstream prelude whose checksum holds (a text body's
    first 12 bytes pass that by chance once in four billion)."""
    if len(body) < _PRELUDE + _MESSAGE_CRC:
        return False
    total, head, crc = struct.unpack_from(">III", body)
    return bool(zlib.crc32(body[:8]) == crc and total >= _PRELUDE + head + _MESSAGE_CRC)


def _event_headers(raw: bytes) -> list[_Header] | None:
    headers, at = [], 0
    while at < len(raw):
        size = raw[at]
        name = raw[at + 1 : at + 1 + size]
        at += 1 + size
        if at >= len(raw):
            return None
        kind = raw[at]
        at += 1
        length = _FIXED_SIZES.get(kind)
        if length is None:
            if kind not in (_STRING, _BYTES) or at + 2 > len(raw):
                return None
            (length,) = struct.unpack_from(">H", raw, at)
            at += 2
        value = raw[at : at + length]
        if len(value) != length:
            return None
        headers.append(_Header(name, kind, value))
        at += length
    return headers


def _eventstream(body: bytes) -> StreamBody:
    """The whole messages of an eventstream body; what follows the last one that reads (a cut
    message, or bytes whose prelude checksum fails) is its tail, kept as bytes."""
    messages: list[_EventMessage] = []
    spans: list[tuple[int, int]] = []
    at = 0
    while at + _PRELUDE + _MESSAGE_CRC <= len(body):
        total, head, crc = struct.unpack_from(">III", body, at)
        end = at + total
        if zlib.crc32(body[at : at + 8]) != crc or total < _PRELUDE + head + _MESSAGE_CRC or end > len(body):
            break
        headers = _event_headers(body[at + _PRELUDE : at + _PRELUDE + head])
        if headers is None:
            break
        (checksum,) = struct.unpack_from(">I", body, end - _MESSAGE_CRC)
        intact = zlib.crc32(body[at : end - _MESSAGE_CRC]) == checksum
        messages.append(_EventMessage(headers, body[at + _PRELUDE + head : end - _MESSAGE_CRC], intact))
        spans.append((at, end))
        at = end
    documents = [_json(message.payload) for message in messages]
    return StreamBody(body, documents, spans, messages=messages, tail=body[at:])
