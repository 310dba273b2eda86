"""Decode recorded provider responses through the SDKs and the wires (`xpeval decode`)."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Any

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ProviderError, ToolCall, TurnResult, WireName
from xpeval.adapters.registry import create_adapter, direct_adapter_for_wire
from xpeval.adapters.wires import Wire, wire_for_path, wire_names
from xpeval.errors import UserError
from xpeval.evals.cassettes.format import Interaction
from xpeval.evals.cassettes.ordered_replay import InOrderReplay


def infer_wire(uri: str) -> WireName:
    """The wire a recorded request URL belongs to (the wires say which paths they serve)."""
    wire = wire_for_path(uri)
    if wire is None:
        raise UserError(f"cannot tell the wire from the URL {uri!r}; pass --wire ({', '.join(wire_names())})")
    return wire.name


def _model_of(interaction: Interaction, wire: Wire) -> str:
    return wire.recorded_model(interaction.uri, interaction.request_json()) or "replayed-model"


async def decode_interaction(interaction: Interaction, wire_name: WireName) -> TurnResult:
    """Replay one recorded response through the SDK's parsing path and the wire's decoder."""
    replay = InOrderReplay([interaction])
    adapter = create_adapter(
        direct_adapter_for_wire(wire_name), AdapterSettings(transport=replay.transport(), timeout=30.0)
    )
    wire = adapter.wire
    kwargs = wire.minimal_request(_model_of(interaction, wire))
    kwargs["stream"] = wire.is_stream(interaction.uri, interaction.request_json())
    try:
        with warnings.catch_warnings():
            # Recordings name models that have since been retired; the SDK's notice is noise here.
            warnings.simplefilter("ignore", DeprecationWarning)
            return await adapter.send(kwargs)
    finally:
        await adapter.aclose()


def _call(call: ToolCall) -> dict[str, Any]:
    """A decoded call; arguments the model sent as broken JSON also carry the text and why, so
    `{}` never passes for what the model said."""
    row: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.parse_error is not None:
        row["raw_arguments"] = call.raw_arguments
        row["parse_error"] = call.parse_error
    return row


def decoded_row(index: int, interaction: Interaction, result: TurnResult) -> dict[str, Any]:
    """The `xpeval decode --json` line for one interaction. A response that could not be
    decoded says why in `decode_error` (and the other interactions are still shown)."""
    row: dict[str, Any] = {
        "interaction": index,
        "status": interaction.status,
        "tool_calls": [_call(c) for c in result.tool_calls],
        "text": result.text,
        "refusal": result.refusal,
        "finish_reason": result.raw_finish_reason,
        "error_type": result.error.type if result.error else None,
    }
    if result.error is not None and result.error.kind in ("decode", "truncated"):
        row["decode_error"] = result.error.message
    return row


def decode_cassette(
    interactions: list[Interaction],
    wire: WireName | None = None,
    *,
    on_skip: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per interaction of a provider wire. Without `wire`, interactions whose URL is no
    provider call (an OAuth token exchange, say) are skipped, reported through `on_skip`; a
    cassette with no provider call at all is an error."""
    if wire is not None and wire not in wire_names():
        raise UserError(f"unknown wire {wire!r} (known: {', '.join(wire_names())})")
    wires: list[WireName | None] = []
    for interaction in interactions:
        try:
            wires.append(wire or infer_wire(interaction.uri))
        except UserError:
            wires.append(None)
    if interactions and not any(wires):
        raise UserError(
            f"no interaction is a call to a known wire (first URL: {interactions[0].uri!r}); "
            f"pass --wire ({', '.join(wire_names())})"
        )

    async def run() -> list[dict[str, Any]]:
        rows = []
        for index, (interaction, wire_name) in enumerate(zip(interactions, wires, strict=True)):
            if wire_name is None:
                if on_skip is not None:
                    on_skip(
                        f"interaction {index}: {interaction.method} {interaction.uri} is not a provider call"
                    )
                continue
            try:
                result = await decode_interaction(interaction, wire_name)
            except Exception as exc:  # one undecodable interaction must not hide the others
                result = TurnResult(
                    error=ProviderError(message=f"{type(exc).__name__}: {exc}", kind="decode")
                )
            rows.append(decoded_row(index, interaction, result))
        return rows

    return asyncio.run(run())
