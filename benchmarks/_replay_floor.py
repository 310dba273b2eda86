"""The SDK floor of the default replay: its SDK calls, answered from memory (`replay_process.py`).

Two steps, each its own process:

- `capture OUT ARGS...` runs `xpeval ARGS...` (the default replay) with two observers and pickles
  what they saw to OUT: every call an adapter handed its wire (`Adapter.send`: the adapter, its
  wire, the SDK call arguments exactly as encoded) with the responses the cassette transport
  served it (status, headers, body bytes, in order), and the modules the process had imported
  when it ended. Nothing of the run changes: the observers copy, they never rewrite.
- `play CAPTURE` is the floor: it imports those modules (in the order they were first imported),
  builds each adapter's SDK client once (as the registry builds it) over an in-memory transport,
  and issues every captured call through the SDK's own method (`chat.completions.create`,
  `responses.create`, `messages.create`, `models.generate_content[_stream]`, mistralai's
  `chat.complete_async` / `stream_async`, cohere's `chat` / `with_raw_response.chat_stream`,
  boto3's `converse[_stream]`), each answered by the bytes recorded for it, a stream read to its
  end: every event parsed by the SDK where the wire reads the SDK's events, and where the wire
  reads the body itself (a cohere stream through the SDK's SSE reader, a Bedrock eventstream
  frame by frame) only what the SDK does for it (the SSE reader; the body's bytes). No cassette
  is read, no case built, nothing decoded into rows, scored or reported: what is left is what the
  SDKs themselves cost. The collector runs as the console script runs it (`console_main`).

Only the standard library is imported here before the captured modules.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import copy
import importlib
import pickle
import sys
from pathlib import Path
from typing import Any

Served = tuple[int, list[tuple[str, str]], bytes]
"""A response as the transport served it: status, headers, body."""

_CALL: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("floor_call", default=None)


def capture(out: Path, argv: list[str]) -> int:
    """Run `xpeval argv` with the observers; pickle the calls and modules to `out`."""
    from xpeval.adapters.adapter import Adapter
    from xpeval.evals.cassettes.binding import CassetteTransport
    from xpeval.evals.cli import console_main

    calls: list[dict[str, Any]] = []
    stray: list[str] = []
    send, handle = Adapter.send, CassetteTransport.handle_async_request

    async def observed_send(self: Adapter, kwargs: Any) -> Any:
        entry = {
            "adapter": self.id,
            "wire": self.contract.wire,
            "kwargs": copy.deepcopy(kwargs),
            "served": [],
        }
        calls.append(entry)
        token = _CALL.set(entry)
        try:
            return await send(self, kwargs)
        finally:
            _CALL.reset(token)

    async def observed_handle(self: CassetteTransport, request: Any) -> Any:
        response = await handle(self, request)
        entry = _CALL.get()
        if entry is None:
            stray.append(str(request.url))
        else:
            stream: Any = response.stream  # a ByteStream: read again, it yields the same bytes
            body = b"".join([chunk async for chunk in stream])
            entry["served"].append((response.status_code, list(response.headers.multi_items()), body))
        return response

    Adapter.send = observed_send  # type: ignore[method-assign]
    CassetteTransport.handle_async_request = observed_handle  # type: ignore[method-assign]
    sys.argv = ["xpeval", *argv]
    code = console_main()
    modules = [name for name in sys.modules if name != "__main__" and not name.startswith("_replay_floor")]
    with out.open("wb") as sink:
        pickle.dump(
            {"calls": calls, "stray": stray, "modules": modules}, sink, protocol=pickle.HIGHEST_PROTOCOL
        )
    return code


class _Memory:
    """The in-memory transport: each request gets the next response queued for the current call."""

    def __init__(self) -> None:
        self.queue: collections.deque[Served] = collections.deque()

    async def handle_async_request(self, request: Any) -> Any:
        import httpx2

        status, headers, body = self.queue.popleft()
        return httpx2.Response(status, headers=headers, stream=httpx2.ByteStream(body))

    async def aclose(self) -> None:
        return None


class _RawBody:
    """A recorded body as botocore reads urllib3's (`stream()`, `close()`)."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body

    def close(self) -> None:
        return None


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


def _without_stream(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k != "stream"}


async def _sdk_call(wire: str, client: Any, kwargs: dict[str, Any]) -> None:
    """The SDK's own call for `wire` with `kwargs`, its stream read to the end."""
    stream = bool(kwargs.get("stream"))
    if wire == "openai-chat":
        answer = await client.chat.completions.create(**kwargs)
    elif wire == "openai-responses":
        answer = await client.responses.create(**kwargs)
    elif wire == "anthropic-messages":
        answer = await client.messages.create(**kwargs)
    elif wire == "google-genai":
        models = client.models
        call = models.generate_content_stream if stream else models.generate_content
        answer = await call(**_without_stream(kwargs))
    elif wire == "mistral-chat":
        call = client.chat.stream_async if stream else client.chat.complete_async
        answer = await call(**_without_stream(kwargs))
    elif wire == "cohere-chat":
        arguments = {**_without_stream(kwargs), "request_options": {"max_retries": 0}}
        if stream:  # as the wire reads it: the raw response through the SDK's own SSE reader
            from cohere.core.http_sse import EventSource

            async with client.with_raw_response.chat_stream(**arguments) as raw:
                await _drain(EventSource(raw.response).aiter_sse())
            return
        answer = await client.chat(**arguments)
    elif wire == "bedrock-converse":
        boto = client.client
        answer = (boto.converse_stream if stream else boto.converse)(**_without_stream(kwargs))
        if stream:  # the body's bytes only: the wire reads the frames itself, not through botocore
            for _ in answer["stream"]._raw_stream.stream():
                pass
        return
    else:
        raise SystemExit(f"the floor knows no SDK call for wire {wire!r}")
    if stream:
        await _drain(answer)


async def _play(calls: list[dict[str, Any]]) -> tuple[int, int]:
    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter

    memory = _Memory()
    clients: dict[str, Any] = {}
    failed = 0
    for call in calls:
        adapter_id = call["adapter"]
        if adapter_id not in clients:
            adapter = create_adapter(adapter_id, AdapterSettings(transport=memory, timeout=60.0))
            if adapter.contract.wire != call["wire"]:
                raise SystemExit(
                    f"{adapter_id}: captured on wire {call['wire']}, built on {adapter.contract.wire}"
                )
            if call["wire"] == "bedrock-converse":
                _answer_boto_from(adapter.client, memory)
            clients[adapter_id] = adapter.client
        memory.queue.clear()
        memory.queue.extend(call["served"])
        try:
            await _sdk_call(call["wire"], clients[adapter_id], call["kwargs"])
        except Exception:  # a recorded error answer: the SDK raises it, as it does for xpeval
            failed += 1
    return len(calls), failed


def _answer_boto_from(client: Any, memory: _Memory) -> None:
    """boto3 sends through urllib3: its `before-send` hook answers from `memory` instead."""
    from botocore.awsrequest import AWSResponse

    events = client.client.meta.events
    events.unregister("before-send.bedrock-runtime", client.bridge.send)

    def answer(request: Any, **_: Any) -> Any:
        status, headers, body = memory.queue.popleft()
        plain = {k: v for k, v in headers if k.lower() != "content-encoding"}
        return AWSResponse(str(request.url), status, plain, _RawBody(body))

    events.register("before-send.bedrock-runtime", answer)


def play(source: Path) -> int:
    import gc

    gc.set_threshold(100_000, 50, 100)  # as the console script runs `xpeval run` (`console_main`)
    with source.open("rb") as captured:
        data = pickle.load(captured)
    if data["stray"]:  # work the floor could not place: say so rather than measure less
        raise SystemExit(
            f"{len(data['stray'])} request(s) outside an adapter's send, e.g. {data['stray'][0]}"
        )
    for name in data["modules"]:
        try:
            importlib.import_module(name)
        except Exception:  # an alias a package put in sys.modules under another name
            continue
    calls, failed = asyncio.run(_play(data["calls"]))
    gc.freeze()
    print(f"{calls} SDK calls, {failed} answered with an error")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:  # `nox -s benchmarks` runs every script: this one is replay_process.py's
        print("a helper of benchmarks/replay_process.py: capture OUT ARGS... | play CAPTURE")
        sys.exit(0)
    if sys.argv[1] == "capture":
        sys.exit(capture(Path(sys.argv[2]), sys.argv[3:]))
    sys.exit(play(Path(sys.argv[2])))
