"""Each provider's Batch API: which wire's requests it takes, its limits, its SDK's batch client,
and the emulator's side of its endpoints (`_base.py` says what a batch is in xpeval's terms).

A wire names its Batch API in its `WirePlugin` (`batch_api="module:ATTR"`), xpeval's own as a
plugin's: the module is imported the first time a batch run asks for it (each pulls in its
SDK's types), so a wire without one is simply not batched."""

from __future__ import annotations

import functools
import importlib

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
from xpeval.errors import WireError

_API_METHODS = (
    "unusable",
    "line_path",
    "request_bytes",
    "submit",
    "status",
    "answers",
    "find",
    "finish",
    "serve",
)


@functools.cache
def _load(target: str) -> BatchApi:
    module, _, attribute = target.partition(":")
    try:
        api = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise WireError(f"Batch API {target}: cannot be imported ({type(exc).__name__}: {exc})") from exc
    missing = [m for m in _API_METHODS if not callable(getattr(api, m, None))]
    if not isinstance(getattr(api, "name", None), str) or not isinstance(
        getattr(api, "limits", None), BatchLimits
    ):
        missing.insert(0, "name and limits")
    if missing:
        raise WireError(f"Batch API {target}: lacks {', '.join(missing)} (the BatchApi protocol)")
    return api  # type: ignore[no-any-return]


def batch_api_of(wire: WireName) -> BatchApi | None:
    """The Batch API for a wire's requests, or None when the wire has none."""
    from xpeval.adapters.wires.catalog import registered_wire

    plugin = registered_wire(wire)
    target = plugin.batch_api if plugin is not None else None
    return _load(target) if target else None


def batch_apis() -> list[BatchApi]:
    """Every registered wire's Batch API, once each, in the wires' order."""
    from xpeval.adapters.wires.catalog import wire_names

    found: dict[str, BatchApi] = {}
    for wire in wire_names():
        api = batch_api_of(wire)
        if api is not None:
            found.setdefault(api.name, api)
    return list(found.values())


def batch_api(name: str) -> BatchApi:
    """The Batch API called `name` (a batch record's `api`)."""
    apis = {api.name: api for api in batch_apis()}
    if name not in apis:
        raise ValueError(f"no Batch API called {name!r} (known: {', '.join(sorted(apis))})")
    return apis[name]


__all__ = [
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
    "batch_apis",
]
