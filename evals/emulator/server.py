"""The provider emulator: a loopback HTTP server answering in each direct wire's exact format.

It serves every URL shape the registered adapters use (OpenAI Chat at any prefix, Responses,
Azure's `/openai/responses?api-version=` and `/openai/v1/responses`, Anthropic `/v1/messages`,
Gemini and Vertex `...models/<m>:generateContent|streamGenerateContent`) and picks the wire
from the path. Bodies come from the wires' own `render()` (plain or streamed as the request
asks); this module only adds HTTP: scripts, status codes, stream framing (each frame flushed
as its own chunk) and faults (delays, pauses between frames, streams cut short, gzip bodies,
extra headers).

Replies are scripted per episode: `script(replies)` returns a script id, and
`transport(script_id)` is an httpx2 transport that sends any request to this server (path and
query kept, host and port replaced) tagged with that id, so many episodes share one server.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Protocol

import httpx2

from xpeval.adapters.contract import TurnResult
from xpeval.adapters.wires import RenderedResponse, Wire, wire_for_path
from xpeval.adapters.wires.batch import BatchRequest
from xpeval.evals.emulator.batches import BatchKnobs, BatchService
from xpeval.evals.emulator.script import Reply
from xpeval.evals.emulator.strict import strict_refusal

SCRIPT_HEADER = "x-emulator-script"
ORIGIN_HEADER = "x-emulator-origin"
"""The scheme and host a request was meant for (a wire may be told by its host: Mistral's path
is OpenAI Chat's)."""
SCRIPTS_PATH = "/__xpeval/scripts"
"""Where a run in another process registers its episodes' scripts (`RemoteEmulator`): POST
`{"name": ..., "results": [TurnResult, ...]}`."""
RECEIVED_KEPT = 2000
"""The latest requests kept for inspection: a long run must not hold every body it sent."""
DEFAULT_SCRIPT = "default"
"""The script answering requests that carry no script id."""


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the emulator received it."""

    script: str
    method: str
    target: str
    """Path and query."""
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    emulator: ClassVar[EmulatorServer]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: request lines may carry a `key=` parameter."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self.emulator._answer(self, body)

    def do_GET(self) -> None:
        self.emulator._answer(self, b"")

    def do_PUT(self) -> None:
        """S3's object upload (Bedrock batch inference's input)."""
        self.do_POST()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    """The listen backlog: a whole run's episodes connect at once (the default 5 refuses some)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a timeout test, a cut stream) is no server error."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            super().handle_error(request, client_address)


class EmulatorServer:
    """A loopback provider emulator. Use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        strict: bool = False,
        batch_knobs: BatchKnobs | None = None,
    ) -> None:
        """`strict`: a request that drops, moves or alters the reasoning state of the replies its
        script served gets the provider's real refusal (`strict.py`). `batch_knobs`: how its
        Batch APIs answer (`batches.py`)."""
        self._address = (host, port)
        self.strict = strict
        self._scripts: dict[str, deque[Reply]] = {}
        self._served: dict[str, list[TurnResult]] = {}
        self._lock = threading.Lock()
        self._names = itertools.count(1)
        self._server: _QuietServer | None = None
        self._thread: threading.Thread | None = None
        self.received: deque[ReceivedRequest] = deque(maxlen=RECEIVED_KEPT)
        self.batches = BatchService(self._batch_reply, batch_knobs)

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> EmulatorServer:
        if self._server is not None:
            return self
        handler = type("EmulatorHandler", (_Handler,), {"emulator": self})
        server = _QuietServer(self._address, handler)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="xpeval-emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def host(self) -> str:
        return self._address[0]

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the emulator is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # --- scripts ------------------------------------------------------------------------

    def script(self, replies: Sequence[Reply], name: str | None = None) -> str:
        """Register replies answered in order to requests tagged with the returned id."""
        script_id = name or f"script-{next(self._names)}"
        with self._lock:
            self._scripts[script_id] = deque(replies)
        return script_id

    def remaining(self, script_id: str) -> int:
        with self._lock:
            return len(self._scripts.get(script_id, ()))

    def transport(
        self, script_id: str = DEFAULT_SCRIPT, *, pool: httpx2.AsyncBaseTransport | None = None
    ) -> EmulatorTransport:
        """An httpx2 transport sending any request to this server, answered by `script_id`;
        through `pool` when given (a run's episodes share one pool instead of one each)."""
        return EmulatorTransport(self, script_id, pool=pool)

    def _next_reply(self, script_id: str) -> tuple[Reply, list[TurnResult]] | None:
        """The script's next reply and the results it served before it."""
        with self._lock:
            queue = self._scripts.get(script_id)
            if not queue:
                return None
            reply = queue.popleft()
            served = self._served.setdefault(script_id, [])
            earlier = list(served)
            if reply.result is not None:
                served.append(reply.result)
            if not queue and script_id != DEFAULT_SCRIPT:
                del self._scripts[script_id]  # a finished episode's script is not kept
                del self._served[script_id]
            return reply, earlier

    # --- answering ----------------------------------------------------------------------

    def _answer(self, handler: _Handler, body: bytes) -> None:
        script_id = handler.headers.get(SCRIPT_HEADER) or DEFAULT_SCRIPT
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.received.append(ReceivedRequest(script_id, handler.command, handler.path, headers, body))
        if handler.path == SCRIPTS_PATH and handler.command == "POST":
            _send(handler, self._register(body))
            return
        batch_answer = self.batches.serve(handler.command, handler.path, headers, body)
        if batch_answer is not None:
            answer = RenderedResponse(
                batch_answer.status, {"content-type": batch_answer.content_type}, [batch_answer.body]
            )
            _send(handler, answer)
            return
        origin = handler.headers.get(ORIGIN_HEADER) or ""
        wire = wire_for_path(origin + handler.path)
        if wire is None:
            where = handler.path.split("?")[0]
            _send(handler, _plain_error(404, f"emulator: no wire serves {handler.command} {where}"))
            return
        found = self._next_reply(script_id)
        if found is None:
            _send(handler, _plain_error(500, f"emulator: script {script_id!r} has no reply left"))
            return
        reply, served = found
        refusal = strict_refusal(wire, served, body, origin + handler.path) if self.strict else None
        if refusal is not None:
            _send(handler, refusal)
            return
        if reply.delay:
            time.sleep(reply.delay)
        _send(handler, _rendered(reply, wire, handler.path, body), reply)

    def _register(self, body: bytes) -> RenderedResponse:
        """A script registered by a run in another process (`RemoteEmulator`)."""
        try:
            document = json.loads(body)
            results = [TurnResult.model_validate(item) for item in document["results"]]
            name = str(document["name"])
        except (ValueError, KeyError, TypeError) as exc:
            return _plain_error(400, f"emulator: not a script: {exc}")
        self.script([Reply(result=result) for result in results], name=name)
        return RenderedResponse(200, {"content-type": "application/json"}, [b"{}"])

    def _batch_reply(self, request: BatchRequest) -> tuple[int, bytes]:
        """What the online endpoint would answer a batch request: the reply of the script named
        by its custom id, rendered whole by the wire of its path."""
        wire = wire_for_path(request.path)
        if wire is None:
            return _plain_error(404, f"emulator: no wire serves {request.path}").status, b"{}"
        found = self._next_reply(request.custom_id)
        if found is None:
            error = _plain_error(500, f"emulator: script {request.custom_id!r} has no reply left")
            return error.status, error.body
        rendered = found[0].rendered(wire, stream=False)
        return rendered.status, rendered.body


def _request_json(body: bytes) -> dict[str, Any] | None:
    try:
        document = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) else None


def _rendered(reply: Reply, wire: Wire, target: str, body: bytes) -> RenderedResponse:
    rendered = reply.rendered(wire, stream=wire.is_stream(target, _request_json(body)))
    headers = {**rendered.headers, **reply.headers}
    if reply.gzip:
        headers["content-encoding"] = "gzip"
        return RenderedResponse(rendered.status, headers, [gzip.compress(rendered.body)])
    return RenderedResponse(rendered.status, headers, rendered.chunks)


def _plain_error(status: int, message: str) -> RenderedResponse:
    body = json.dumps({"error": {"message": message, "type": "emulator_error", "code": status}}).encode()
    return RenderedResponse(status, {"content-type": "application/json"}, [body])


def _send(handler: _Handler, response: RenderedResponse, reply: Reply | None = None) -> None:
    chunks = [c for c in response.chunks if c]
    streamed = len(chunks) > 1 or response.headers.get("content-type", "").startswith("text/event-stream")
    handler.send_response(response.status)
    for name, value in response.headers.items():
        if name.lower() not in ("content-length", "transfer-encoding", "connection"):
            handler.send_header(name, value)
    if not streamed:
        handler.send_header("content-length", str(len(response.body)))
        handler.end_headers()
        handler.wfile.write(response.body)
        handler.wfile.flush()
        return
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    truncate_after = reply.truncate_after if reply is not None else None
    for index, chunk in enumerate(chunks):
        if truncate_after is not None and index >= truncate_after:
            _cut(handler)
            return
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        handler.wfile.flush()
        if reply is not None and reply.chunk_delay:
            time.sleep(reply.chunk_delay)
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def _cut(handler: _Handler) -> None:
    """End the connection mid-body: the client sees an incomplete chunked response."""
    handler.wfile.flush()
    handler.close_connection = True
    with contextlib.suppress(OSError):
        handler.connection.shutdown(socket.SHUT_RDWR)


class Reachable(Protocol):
    """Where an emulator listens (this process's `EmulatorServer`, or a `RemoteEmulator`)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


class EmulatorTransport(httpx2.AsyncBaseTransport):
    """Sends every request to the emulator (path and query kept), tagged with a script id."""

    def __init__(
        self, server: Reachable, script_id: str, *, pool: httpx2.AsyncBaseTransport | None = None
    ) -> None:
        self.server = server
        self.script_id = script_id
        self._owns_pool = pool is None
        self._inner = pool if pool is not None else httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        content = await request.aread()
        url = request.url.copy_with(scheme="http", host=self.server.host, port=self.server.port)
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "host"]
        headers.append((SCRIPT_HEADER, self.script_id))
        headers.append((ORIGIN_HEADER, f"{request.url.scheme}://{request.url.netloc.decode('ascii')}"))
        forwarded = httpx2.Request(
            request.method, url, headers=headers, content=content, extensions=request.extensions
        )
        return await self._inner.handle_async_request(forwarded)

    async def aclose(self) -> None:
        if self._owns_pool:
            await self._inner.aclose()
