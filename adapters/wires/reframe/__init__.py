"""A recorded stream as the whole reply it spells, and the same reply in other stream shapes.

Each built-in wire's reframer reads a recorded stream's own frames into the non-streamed body
the provider would have sent for the same reply (`whole`: the reference a streamed decode must
equal), and writes that reply again as a stream in a shape drawn from a random source (`reframe`:
how other servers split the same reply; docs/stream-shapes.md). `byte_split` cuts any body into
the arbitrary pieces a network delivers. Used by the streamed = whole checks (tests, the
conformance suite, benchmarks/stream_rechunk.py); nothing here decodes.
"""

from __future__ import annotations

from random import Random
from typing import Protocol

from xpeval.adapters.contract import JsonObject, WireName
from xpeval.adapters.wires.reframe._cuts import byte_split, interleave, text_cuts


class Reframer(Protocol):
    """One wire's stream shapes."""

    def whole(self, body: bytes) -> JsonObject | None:
        """The non-streamed body a recorded stream's frames spell, or None when they spell no
        whole reply (an error frame, no terminal event, a shape this reader does not know)."""
        ...

    def reframe(self, whole: JsonObject, rng: Random) -> list[bytes]:
        """`whole` as a stream whose frames are shaped by `rng`'s draws (each element one frame
        as the server would flush it)."""
        ...


def reframer_for(wire: WireName) -> Reframer | None:
    """The reframer of a built-in wire (and of wires whose frames are OpenAI Chat's), else None."""
    if wire == "openai-chat":
        from xpeval.adapters.wires.reframe.openai_chat import REFRAMER as chat

        return chat
    if wire == "mistral-chat":
        # Mistral streams OpenAI Chat's chunks with every call whole in one piece
        # (xpeval/bundled/mistral_chat.py); its reframer is Chat's in that mode.
        from xpeval.adapters.wires.reframe.openai_chat import MISTRAL

        return MISTRAL
    if wire == "bedrock-converse":
        # Bedrock's ConverseStream (xpeval/bundled/bedrock_converse.py), likewise.
        from xpeval.adapters.wires.reframe.bedrock_converse import REFRAMER as bedrock

        return bedrock
    if wire == "cohere-chat":
        # Cohere's v2 stream (xpeval/bundled/cohere_chat.py): read and written here with the
        # built-in wires' so the streamed = whole checks cover it.
        from xpeval.adapters.wires.reframe.cohere_chat import REFRAMER as cohere

        return cohere
    if wire == "anthropic-messages":
        from xpeval.adapters.wires.reframe.anthropic import REFRAMER as anthropic

        return anthropic
    if wire == "google-genai":
        from xpeval.adapters.wires.reframe.google import REFRAMER as google

        return google
    if wire == "openai-responses":
        from xpeval.adapters.wires.reframe.openai_responses import REFRAMER as responses

        return responses
    return None


__all__ = ["Reframer", "byte_split", "interleave", "reframer_for", "text_cuts"]
