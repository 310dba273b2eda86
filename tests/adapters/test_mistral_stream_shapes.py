"""Mistral streams each call whole in one piece; however the pieces are grouped into chunks,
every call stays its own (docs/stream-shapes.md)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from xpeval.adapters.wires import RenderedResponse
from xpeval.evals.conformance._fixtures import request, scripted
from xpeval.evals.emulator import Reply

BASE = {"id": "cmpl-shape", "object": "chat.completion.chunk", "created": 1, "model": "mistral-small-latest"}


def _frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return f"data: {json.dumps({**BASE, 'choices': [choice]})}\n\n".encode()


def _call(n: int, index: int) -> dict[str, Any]:
    arguments = json.dumps({"path": f"/app/{n}.yaml"})
    return {"id": f"call_{n}", "function": {"name": "read_file", "arguments": arguments}, "index": index}


def test_two_calls_in_one_chunk_then_a_third_are_three_calls() -> None:
    frames = [
        _frame({"role": "assistant", "content": ""}),
        _frame({"tool_calls": [_call(0, 0), _call(1, 0)]}),
        _frame({"tool_calls": [_call(2, 0)]}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
    raw = RenderedResponse(200, {"content-type": "text/event-stream"}, frames)
    adapter, _ = scripted("mistral", Reply(raw=raw))
    result = asyncio.run(adapter.turn(request(stream=True)))
    assert result.error is None, result.error
    assert [(c.id, c.arguments) for c in result.tool_calls] == [
        (f"call_{n}", {"path": f"/app/{n}.yaml"}) for n in range(3)
    ]
