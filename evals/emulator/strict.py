"""The emulator's strict mode: a request that does not carry back the reasoning state the
emulator served earlier in its conversation gets the provider's real refusal.

The rules are the wire's (`xpeval.adapters.wires.loop_rules`): this module only parses the body
and asks them. A mutation, when given, is applied first: the request as a loop that drops,
moves or alters the state would have sent it (the conformance suite's mutation checks).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from xpeval.adapters.contract import TurnResult
from xpeval.adapters.wires import RenderedResponse, Wire
from xpeval.adapters.wires.loop_rules import Mutation, rules_of


def strict_refusal(
    wire: Wire, served: Sequence[TurnResult], body: bytes, url: str, mutation: Mutation | None = None
) -> RenderedResponse | None:
    """The provider's refusal of a request whose body (sent to `url`) drops, moves or alters the
    state of the replies `served` so far; None when it keeps it, or the wire has no such state."""
    rules = rules_of(wire)
    if rules is None or not served:
        return None
    try:
        document = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    if mutation is not None:
        document = rules.mutate(mutation, document)
    return rules.check(served, document, url)


def with_state(wire: Wire, replies: Sequence[TurnResult], conversation: str) -> list[TurnResult]:
    """`replies` as a provider with reasoning on returns them: each with the wire's reasoning
    state (unchanged when the wire has none, or for an error reply)."""
    rules = rules_of(wire)
    if rules is None:
        return list(replies)
    return [
        reply if reply.error is not None else rules.with_state(reply, f"{conversation}#{index}")
        for index, reply in enumerate(replies)
    ]
