"""How a reframer cuts: bytes into network pieces, text into deltas, sequences interleaved."""

from __future__ import annotations

import itertools
from random import Random
from typing import TypeVar

T = TypeVar("T")


def byte_split(body: bytes, rng: Random, *, most: int = 64) -> list[bytes]:
    """`body` cut at up to `most` places drawn by `rng` (pieces may split a frame, a line end, a
    JSON token or a UTF-8 character); sometimes one byte at a time over a stretch."""
    if len(body) < 2:
        return [body]
    if rng.random() < 0.2:
        start = rng.randrange(len(body))
        stop = min(len(body), start + rng.randint(1, 48))
        cuts = set(range(start, stop))
    else:
        cuts = {rng.randrange(1, len(body)) for _ in range(rng.randint(1, min(most, len(body) - 1)))}
    edges = [0, *sorted(c for c in cuts if 0 < c < len(body)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


def text_cuts(text: str, rng: Random, *, most: int = 8) -> list[str]:
    """`text` in 1 to `most` non-empty pieces drawn by `rng` (one empty piece for empty text)."""
    if len(text) < 2:
        return [text]
    count = rng.randint(0, min(most - 1, len(text) - 1))
    edges = [0, *sorted(rng.sample(range(1, len(text)), count)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(edges)]


def interleave(sequences: list[list[T]], rng: Random) -> list[T]:
    """Several sequences merged in an order drawn by `rng` that keeps each one's own order and
    starts them in their given order (a decoder orders calls or items by their heads)."""
    queues = [list(items) for items in sequences]
    started = 0
    out: list[T] = []
    while any(queues):
        pick = rng.choice([i for i, q in enumerate(queues) if q and i <= started])
        out.append(queues[pick].pop(0))
        if pick == started:
            started += 1
    return out
