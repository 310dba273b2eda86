"""Reading what other people hand in, within stated bounds: files, YAML documents, encoded bodies.

Case files and cassettes arrive in pull requests, so every read of one is bounded three ways:

- **size**: a file above `max_input_mb` is refused from its size alone, before it is read;
- **YAML nodes**: a document may stand for at most `max_yaml_nodes` nodes, each alias counted as
  the nodes it stands for. An alias bomb ("billion laughs": 800 bytes whose nine anchors stand for
  387 million strings) is refused while it is counted, never built; so is a file of millions of
  tiny nodes (each costs Python a few hundred bytes), and an alias to a node that holds it;
- **decoded bodies**: gzip and deflate bodies are decoded to at most `max_input_mb` in all, per
  file, and refused beyond (a 6 MB cassette can hold a body that inflates to 4 GiB).

A JSON Lines file of real traffic (`xpeval cases requests`) may be of any size: it is read a line
at a time (`json_lines`), and each line is bounded instead, by what it becomes:

- **bytes**: a line of at most a quarter of `max_input_mb` (`InputLimits.max_line_bytes`, 8 MB by
  default). The case it becomes carries a call's arguments twice (as values and as their text),
  so a line within this cap always becomes a case line a case file within `max_input_mb` holds;
  a longer line is read on in pieces kept nowhere and refused;
- **values**: at most `max_yaml_nodes` JSON values and keys (`json_value_bound`, counted on the
  bytes without building them): a line of 8 MB of `[0,0,...]` would be four million objects.

Lines are split at `\n` only, as JSON Lines defines them: U+2028, U+0085 and the other
separators `str.splitlines` knows may stand unescaped inside a JSON string.

The defaults are stated here (`InputLimits`) and a project raises them in `[tool.xpeval]`
(`max_input_mb`, `max_yaml_nodes`; README, "Your own suite"), which
`xpeval.evals.project.input_limits` reads. A refusal is `InputRefused` with one line that says
the cap and how to raise it; the reader names the file.

Counting costs nothing for the common file. Counting nodes walks libyaml's event stream in
Python, so it runs only when it could matter: when the text has an `&` (no anchor, no alias:
YAML has no other way to spell one), or when the structure characters it holds could add up to
more nodes than the budget (`node_bound`). No committed cassette has either, so their replay
keeps libyaml's speed.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

MB = 1024 * 1024
DEFAULT_MAX_INPUT_MB = 32
"""The largest case file or cassette read, and the most its encoded bodies may decode to (the
largest committed cassette is 2.9 MB)."""
DEFAULT_MAX_YAML_NODES = 100_000
"""The most nodes a YAML document may stand for (a built-in case file holds about 1,500; a
cassette a few hundred). 100,000 nodes cost libyaml and PyYAML about 40 MB and a second."""

LINE_SHARE = 4
"""A JSON line may take this fraction of `max_input_mb` (the case it becomes is at most about
three times as long: arguments are kept as values and as their escaped text)."""

RAISE_HINT = "raise {key} in [tool.xpeval] if it is genuine"

_STRUCTURE = ":-?,[{"
"""The characters that can introduce a YAML node besides a document's root (see `node_bound`)."""
_NOT_STRUCTURE = bytes(b for b in range(256) if chr(b) not in _STRUCTURE)


class InputRefused(Exception):
    """An input beyond a cap: the reason, on one line, without the file's name."""


@dataclass(frozen=True)
class InputLimits:
    """The caps on every untrusted input (README, "Your own suite": `max_input_mb`,
    `max_yaml_nodes`)."""

    max_bytes: int = DEFAULT_MAX_INPUT_MB * MB
    max_yaml_nodes: int = DEFAULT_MAX_YAML_NODES

    @classmethod
    def of(cls, max_input_mb: float | None = None, max_yaml_nodes: int | None = None) -> InputLimits:
        return cls(
            max_bytes=int(max_input_mb * MB) if max_input_mb is not None else cls.max_bytes,
            max_yaml_nodes=max_yaml_nodes if max_yaml_nodes is not None else cls.max_yaml_nodes,
        )

    @property
    def max_mb(self) -> str:
        return _mb(self.max_bytes)

    @property
    def max_line_bytes(self) -> int:
        """The longest JSON line read (a quarter of `max_bytes`: see the module's note)."""
        return self.max_bytes // LINE_SHARE


def _mb(size: int) -> str:
    """A size as a person reads it: `200 MB`, `2.5 MB`, `340 KB`, `12 bytes`."""
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


# --- files ------------------------------------------------------------------------------------


def read_bounded(path: Path, limits: InputLimits) -> bytes:
    """The bytes of `path`, refused from its size when it is above the cap (OSError as it comes)."""
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise InputRefused(_too_large(f"{_mb(size)}", limits))
    with path.open("rb") as handle:
        data = handle.read(size + 1)
        if len(data) > size:  # it grew since, or stat cannot size it: read on, to the cap
            data += handle.read(limits.max_bytes + 1 - len(data))
    if len(data) > limits.max_bytes:
        raise InputRefused(_too_large("more", limits))
    return data


def _too_large(size: str, limits: InputLimits) -> str:
    return f"{size}, above the {limits.max_mb} cap on an input file ({RAISE_HINT.format(key='max_input_mb')})"


# --- JSON Lines ---------------------------------------------------------------------------------

_SKIP_PIECE = MB


def json_lines(path: Path, limits: InputLimits) -> Iterator[tuple[int, bytes | InputRefused]]:
    """Each non-blank line of a JSON Lines file with its number (from 1), split at `\n` only, or
    InputRefused for a line above `limits.max_line_bytes` (the rest of it is read a megabyte at a
    time and kept nowhere). At most one line is held at a time. OSError as it comes."""
    cap = limits.max_line_bytes
    with path.open("rb") as handle:
        number = 0
        while True:
            line = handle.readline(cap + 1)
            if not line:
                return
            number += 1
            if len(line) > cap and not line.endswith(b"\n"):
                size = len(line) + _skip_line(handle)
                yield number, InputRefused(_line_too_long(size, limits))
            elif line.strip():
                yield number, line


def _skip_line(handle: Any) -> int:
    """Read on to the end of the current line; the bytes read."""
    skipped = 0
    while True:
        piece = handle.readline(_SKIP_PIECE)
        skipped += len(piece)
        if not piece or piece.endswith(b"\n"):
            return skipped


def _line_too_long(size: int, limits: InputLimits) -> str:
    return (
        f"a line of {_mb(size)}, above the {_mb(limits.max_line_bytes)} cap on a JSON line "
        f"(a quarter of max_input_mb: {RAISE_HINT.format(key='max_input_mb')})"
    )


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_JSON_STRUCTURE = bytes(b for b in range(256) if chr(b) not in "[{,:")


def json_value_bound(line: bytes) -> int:
    """An upper bound on the values and keys a JSON text stands for, without building them.

    Outside strings, every value but the first follows a `[`, `,` or `:`, and every key a `{` or
    `,`: one per such character, plus the root, is never less than the truth."""
    bare = _JSON_STRING.sub(b"", line)
    return 1 + len(bare.translate(None, _NOT_JSON_STRUCTURE))


def check_json_values(line: bytes, limits: InputLimits) -> None:
    """InputRefused when `line` may stand for more than `limits.max_yaml_nodes` values."""
    if 1 + len(line) <= limits.max_yaml_nodes:  # the bound is at most one per character
        return
    bound = json_value_bound(line)
    if bound > limits.max_yaml_nodes:
        raise InputRefused(
            f"up to {bound:,} JSON values and keys, more than {limits.max_yaml_nodes:,} "
            f"({RAISE_HINT.format(key='max_yaml_nodes')})"
        )


# --- YAML -------------------------------------------------------------------------------------


def load_yaml(text: str | bytes, loader: Any, limits: InputLimits) -> Any:
    """`yaml.load(text, Loader=loader)` (a SafeLoader or libyaml's CSafeLoader, or a subclass),
    refused when the document stands for more than `limits.max_yaml_nodes` nodes."""
    if _may_exceed(text, limits.max_yaml_nodes):
        count_nodes(text, loader, limits.max_yaml_nodes)
    return yaml.load(text, Loader=loader)  # the callers' loaders are safe ones


def node_bound(text: str | bytes) -> int:
    """An upper bound on the nodes of a YAML text without aliases, from six characters.

    Besides the root, a node is introduced by one of `: - ? , [ {`: a block sequence item by its
    `-`; a mapping entry (key, value and, for a mapping's first entry, the mapping itself) by its
    `:` or `?`, or in flow by the `,`, `{` or `[` before it (`{a, b}` keys have null values; `[a: b]`
    is a one-pair mapping). None introduces more than three, so three per such character, plus
    the root, is never less than the truth; they may also sit inside scalars (only more).
    """
    if isinstance(text, str):
        found = sum(text.count(character) for character in _STRUCTURE)
    else:
        found = len(text.translate(None, _NOT_STRUCTURE))
    return 1 + 3 * found


def _may_exceed(text: str | bytes, budget: int) -> bool:
    anchors = "&" in text if isinstance(text, str) else b"&" in text
    # Three nodes per character at most: a text that short needs no counting of its characters.
    return anchors or (1 + 3 * len(text) > budget and node_bound(text) > budget)


_STARTS = (SequenceStartEvent, MappingStartEvent)
_ENDS = (SequenceEndEvent, MappingEndEvent)


def count_nodes(text: str | bytes, loader: Any, budget: int) -> int:
    """The nodes `text` stands for (aliases expanded), from libyaml's events; InputRefused as
    soon as they exceed `budget`, or at an alias to a node that holds it (endless).

    One pass, no node built: each open collection keeps its anchor and the nodes it holds so
    far, and an anchor's size is known when its node ends; an alias adds its anchor's size."""
    parser = loader(text)
    sizes: dict[str, int] = {}
    opened: list[list[Any]] = []  # [anchor, nodes so far] of each open collection
    total = 0
    get_event = parser.get_event
    try:
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent or kind in _STARTS:
                added = 1
            elif kind in _ENDS:
                anchor, nodes = opened.pop()
                if opened:
                    opened[-1][1] += nodes
                if anchor is not None:
                    sizes[anchor] = nodes
                continue
            elif kind is AliasEvent:
                if any(frame[0] == event.anchor for frame in opened):
                    raise InputRefused(f"the YAML alias *{event.anchor} refers to a node that holds it")
                added = sizes.get(str(event.anchor), 1)  # an unknown anchor: the loader says so
            elif kind is StreamEndEvent:
                return total
            else:
                continue
            total += added
            if total > budget:
                raise InputRefused(_too_many(event, budget))
            if kind in _STARTS:
                opened.append([event.anchor, 1])
                continue
            if opened:
                opened[-1][1] += added
            if kind is ScalarEvent and event.anchor is not None:
                sizes[event.anchor] = 1
    finally:
        parser.dispose()


def _too_many(event: Any, budget: int) -> str:
    how = "its aliases expand it past" if isinstance(event, AliasEvent) else "more than"
    return f"{how} {budget:,} YAML nodes ({RAISE_HINT.format(key='max_yaml_nodes')})"


# --- encoded bodies ---------------------------------------------------------------------------


@dataclass
class DecodeBudget:
    """What the encoded bodies of one file may still decode to, in bytes."""

    remaining: int

    @classmethod
    def of(cls, limits: InputLimits) -> DecodeBudget:
        return cls(limits.max_bytes)


def decompress(body: bytes, encoding: str, budget: DecodeBudget, limits: InputLimits) -> bytes:
    """A gzip (any number of members) or zlib-wrapped deflate body, decoded to at most
    `budget.remaining` bytes: InputRefused beyond, ValueError when it is not that encoding or
    ends early.

    It is decoded twice: once counting (a megabyte at a time, kept nowhere), so refusing a bomb
    costs a megabyte, then for real, to its known size."""
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    size = _inflate(body, wbits, encoding, budget.remaining, None)
    if size > budget.remaining:
        raise InputRefused(
            f"its {encoding} bodies decode to more than {limits.max_mb} "
            f"({RAISE_HINT.format(key='max_input_mb')})"
        )
    pieces: list[bytes] = []
    _inflate(body, wbits, encoding, size, pieces)
    budget.remaining -= size
    return b"".join(pieces)


_PIECE = MB


def _inflate(body: bytes, wbits: int, encoding: str, limit: int, keep: list[bytes] | None) -> int:
    """The decoded size of `body`, counted up to just past `limit`; the pieces go to `keep`."""
    total = 0
    rest = body
    while rest:
        decoder = zlib.decompressobj(wbits)
        pending = rest
        while not decoder.eof:
            try:
                piece = decoder.decompress(pending, _PIECE)
            except zlib.error as exc:
                raise ValueError(f"the {encoding} body does not decode: {exc}") from exc
            total += len(piece)
            if keep is not None:
                keep.append(piece)
            if total > limit:
                return total
            pending = decoder.unconsumed_tail
            if not piece and not pending:
                raise ValueError(f"the {encoding} body ends early")
        rest = decoder.unused_data if encoding == "gzip" else b""
    return total
