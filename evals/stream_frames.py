"""A recorded stream body as its JSON frames, and the text those frames spell together.

A streamed answer arrives in frames, each carrying a fragment of the text: one frame's
`...delta.content` is "planted-ab", the next one's is "cd12...". A secret the provider echoes
can therefore be split across frames, whole in what the client reassembles and whole in no
frame. This module knows only the framings every streaming wire uses (server-sent events'
`data:` lines, newline-delimited JSON, a JSON array of chunks), never a wire's fields: the
text a stream spells is, for each JSON path, the fragments found at that path frame after
frame (`channels`). A frame whose fragment changes is written again; the others keep their
bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
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

    @classmethod
    def parse(cls, body: bytes) -> StreamBody | None:
        """The frames of a streamed body: server-sent events with a JSON `data:` line (one is a
        stream, cut after its first frame), a JSON array of chunks, or two or more lines of
        JSON; None for anything else (a plain response is one document, not frames)."""
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

    def render(self) -> bytes:
        """The body with every changed frame written again (compact JSON), the rest as it was."""
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
