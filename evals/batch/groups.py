"""Batch requests grouped per Batch API, adapter and model, split at the API's limits (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xpeval.adapters.wires.batch import BatchLimits

T = TypeVar("T")


def split(items: Sequence[T], sizes: Sequence[int], limits: BatchLimits) -> list[list[T]]:
    """`items` in order, in chunks of at most `limits.max_requests` items and `limits.max_bytes`
    bytes (each item's size in `sizes`); an item larger than a whole batch is a chunk alone (the
    provider refuses it, and its episode's row says so)."""
    chunks: list[list[T]] = []
    current: list[T] = []
    used = 0
    for item, size in zip(items, sizes, strict=True):
        if current and (len(current) >= limits.max_requests or used + size > limits.max_bytes):
            chunks.append(current)
            current, used = [], 0
        current.append(item)
        used += size
    if current:
        chunks.append(current)
    return chunks
