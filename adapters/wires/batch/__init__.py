"""Each provider's Batch API: which wire's requests it takes, its limits, its SDK's batch client,
and the emulator's side of its endpoints (`_base.py` says what a batch is in xpeval's terms)."""

from __future__ import annotations

from xpeval.adapters.contract import WireName
from xpeval.adapters.wires.batch._base import (
    BatchAnswer,
    BatchApi,
    BatchLimits,
    BatchRequest,
    BatchStatus,
    EmulatedBatch,
    EmulatedService,
    HttpAnswer,
)

BATCH_APIS: dict[str, str] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "google-genai": "gemini",
}
"""The Batch API that takes each wire's requests (a wire without one is not batched)."""


def batch_api(name: str) -> BatchApi:
    """The Batch API called `name` (imported lazily: each pulls in its SDK's types)."""
    if name == "openai":
        from xpeval.adapters.wires.batch.openai import API as openai_api

        return openai_api
    if name == "anthropic":
        from xpeval.adapters.wires.batch.anthropic import API as anthropic_api

        return anthropic_api
    if name == "gemini":
        from xpeval.adapters.wires.batch.gemini import API as gemini_api

        return gemini_api
    raise ValueError(f"no Batch API called {name!r} (known: {', '.join(sorted(set(BATCH_APIS.values())))})")


def batch_api_of(wire: WireName) -> BatchApi | None:
    """The Batch API for a wire's requests, or None when the wire has none."""
    name = BATCH_APIS.get(wire)
    return batch_api(name) if name else None


__all__ = [
    "BATCH_APIS",
    "BatchAnswer",
    "BatchApi",
    "BatchLimits",
    "BatchRequest",
    "BatchStatus",
    "EmulatedBatch",
    "EmulatedService",
    "HttpAnswer",
    "batch_api",
    "batch_api_of",
]
