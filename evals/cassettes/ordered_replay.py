"""Serve recorded responses to an SDK through httpx2's MockTransport.

The SDK then parses the bytes exactly as it would parse the network's, so decoding a
recording exercises the production path: SDK parsing, then the wire's decoder.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx2

from xpeval.adapters.wires import wire_for_path
from xpeval.evals.cassettes.format import Interaction


def recorded_response(interaction: Interaction) -> httpx2.Response:
    """The httpx2 response a client would have received for this interaction (as its wire's SDK
    must be served it: the wire may re-frame what the provider sent)."""
    headers = interaction.flat_response_headers()
    body = interaction.response_body
    wire = wire_for_path(interaction.uri)
    if wire is not None:
        headers, body = wire.replayable_response(interaction.uri, headers, body)
    return httpx2.Response(interaction.status, headers=headers, content=body)


class InOrderReplay:
    """A MockTransport handler answering successive requests with successive recordings.

    Requests beyond the recording fail loudly instead of reaching the network.
    """

    def __init__(self, interactions: Sequence[Interaction], source: str = "<cassette>") -> None:
        self._interactions = list(interactions)
        self._next = 0
        self._source = source

    @property
    def remaining(self) -> int:
        return len(self._interactions) - self._next

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if self._next >= len(self._interactions):
            raise RuntimeError(
                f"{self._source}: request {self._next} ({request.method} {request.url}) "
                "has no recorded response"
            )
        interaction = self._interactions[self._next]
        self._next += 1
        return recorded_response(interaction)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)
