"""A plugin wire's turns, played off the run's event loop: a plugin that blocks costs its own
episodes, never the run.

A plugin's codec is another package's code, called on the asyncio loop that plays every episode.
A synchronous busy loop in it (in `decode`, say) would block that loop: no other episode moves,
no timeout fires (`asyncio.wait_for` needs the loop), and the run hangs. Python cannot kill a
thread, and nothing can interrupt a loop that never yields, so the plugin's code runs where a
block costs only itself:

- Each plugin wire gets one worker thread running an event loop of its own (`_WorkerLoop`); the
  wire's turns (encode, send, decode, its errors) are played there while the caller awaits the
  result on the run's loop, which stays free, so the episode's own timeout ends the episode.
- The requests the plugin's client sends still go through xpeval's transport on the run's loop
  (`at_home`: cassettes, the emulator's script, the run's connection pool and the episode's
  binding all live there), and so does every read of a response body (`_HomeStream`).
- The worker loop beats every `_BEAT_SECONDS`. A call cancelled (its episode timed out) while the
  worker has not beaten for `BLOCKED_AFTER_SECONDS` is blocked in plugin code: its thread is
  abandoned (a daemon: it cannot hold the process at exit) and the wire is not called again in
  this process; every later turn of it is at once a `timeout` error saying why. So at most one
  thread per plugin wire is ever abandoned, and a run with a blocking plugin ends in bounded
  time: its episodes are rows of kind `timeout`, every other adapter's rows are written.

xpeval's own wires (built in, or bundled in `xpeval/bundled/`) are not run this way: they are
xpeval's code, held to its tests.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import httpx2

T = TypeVar("T")

BLOCKED_AFTER_SECONDS = 1.0
"""A worker loop that has not run its heartbeat for this long is blocked in plugin code."""
_BEAT_SECONDS = 0.1

_HOME: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "xpeval_home_loop", default=None
)
"""In a plugin's worker: the run's loop, where its requests are sent."""


class PluginBlocked(RuntimeError):
    """The plugin wire blocked its worker loop in an earlier call; it is not called again."""


class _WorkerLoop:
    """One plugin wire's thread and event loop."""

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self.loop = asyncio.new_event_loop()
        self.beat = time.monotonic()
        self.blocked_since: float | None = None
        self.thread = threading.Thread(target=self._serve, name=f"xpeval-plugin-{wire}", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._heartbeat)
        self.loop.run_forever()

    def _heartbeat(self) -> None:
        self.beat = time.monotonic()
        self.loop.call_later(_BEAT_SECONDS, self._heartbeat)

    def stalled(self) -> bool:
        return time.monotonic() - self.beat > BLOCKED_AFTER_SECONDS

    async def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        if self.blocked_since is not None:
            raise PluginBlocked(
                f"plugin wire {self.wire} blocked its event loop in an earlier call (its code never "
                f"returned, {time.monotonic() - self.blocked_since:.0f} s ago); it is not called again "
                "in this process"
            )
        context = contextvars.copy_context()
        context.run(_HOME.set, asyncio.get_running_loop())
        done: concurrent.futures.Future[T] = concurrent.futures.Future()
        started: list[asyncio.Task[T]] = []

        def start() -> None:
            if done.cancelled():
                return
            task = self.loop.create_task(make(), context=context)
            started.append(task)
            task.add_done_callback(lambda finished: _settle(finished, done))

        self.loop.call_soon_threadsafe(start)
        try:
            return await asyncio.wrap_future(done)
        except asyncio.CancelledError:
            if self.stalled():
                self.blocked_since = time.monotonic()  # abandoned: the thread is a daemon
            else:
                self.loop.call_soon_threadsafe(lambda: [task.cancel() for task in started])
            raise


def _settle(task: asyncio.Task[T], done: concurrent.futures.Future[T]) -> None:
    if done.done():
        return
    if task.cancelled():
        done.cancel()
    elif task.exception() is not None:
        done.set_exception(task.exception())
    else:
        done.set_result(task.result())


_WORKERS: dict[str, _WorkerLoop] = {}
_WORKERS_LOCK = threading.Lock()


async def off_loop(wire: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`await make()` on plugin wire `wire`'s own worker loop; `PluginBlocked` once that loop
    was found blocked."""
    with _WORKERS_LOCK:
        worker = _WORKERS.get(wire)
        if worker is None:
            worker = _WORKERS[wire] = _WorkerLoop(wire)
    return await worker.run(make)


async def at_home(call: Callable[[], Awaitable[T]]) -> T:
    """`await call()` on the run's loop when running in a plugin's worker (the transport, the
    recordings and the connection pool live there); directly anywhere else."""
    home = _HOME.get()
    if home is None or home is asyncio.get_running_loop():
        return await call()

    async def there() -> T:
        return await call()

    # The task is made in a copy of this context (call_soon_threadsafe copies it here): the
    # episode's bindings travel with the call.
    future = asyncio.run_coroutine_threadsafe(there(), home)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        future.cancel()
        raise


def home_response(response: httpx2.Response) -> httpx2.Response:
    """`response` (opened on the run's loop) read from a plugin's worker: each chunk and the
    close are done on the run's loop."""
    home = _HOME.get()
    if home is None or home is asyncio.get_running_loop():
        return response
    if isinstance(response.stream, httpx2.AsyncByteStream):
        response.stream = _HomeStream(response.stream)
    return response


class _HomeStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()

        async def following() -> bytes | None:
            try:
                return await chunks.__anext__()
            except StopAsyncIteration:
                return None

        while (chunk := await at_home(following)) is not None:
            yield chunk

    async def aclose(self) -> None:
        await at_home(self._inner.aclose)
