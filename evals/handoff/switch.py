"""A conversation moved to the adapter a case turn names, mid-episode (issue 34, "Handoff").

A runtime that picks the provider per turn hands the history so far to the next turn's adapter:
`hand_over` converts it (`xpeval.adapters.wires.handoff.hand_off`) or, when a rule makes the
handoff impossible, says so as a `handoff` error value, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence

from xpeval.adapters.contract import Message, ProviderError
from xpeval.adapters.registry import effective_contract, provider_of
from xpeval.adapters.wires.handoff import Party, hand_off
from xpeval.errors import UnknownAdapterError


def party_of(adapter_id: str) -> Party:
    """An adapter as one side of a handoff: its wire, its provider, its declared reasoning state."""
    contract = effective_contract(adapter_id)
    return Party(
        adapter=adapter_id,
        wire=contract.wire,
        provider=provider_of(adapter_id).name,
        reasoning_state=frozenset(contract.capabilities.reasoning_state),
    )


def hand_over(messages: Sequence[Message], source: str, target: str) -> list[Message] | ProviderError:
    """`messages`, written through adapter `source`, converted for adapter `target`; a `handoff`
    error naming the rule when no conversion makes them acceptable (or `target` is unknown)."""
    try:
        handoff = hand_off(messages, party_of(source), party_of(target))
    except UnknownAdapterError as exc:
        return ProviderError(kind="handoff", message=f"handoff {source} -> {target}: {exc}")
    impossible = handoff.impossible
    if impossible is not None:
        return ProviderError(
            kind="handoff",
            message=f"handoff {source} -> {target} is impossible: {impossible.rule} "
            f"({impossible.what} of message {impossible.message})",
        )
    return handoff.messages


__all__ = ["hand_over", "party_of"]
