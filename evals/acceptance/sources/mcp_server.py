"""Tools from a live MCP server, read through the official `mcp` SDK.

`--mcp 'COMMAND ARGS'` starts the server as a subprocess and speaks MCP over its stdio (the
SDK's messages over a transport of this module that bounds each one, `_bounded_stdio`);
`--mcp http(s)://...` connects to a streamable HTTP endpoint
(`streamable_http_client`). Either way a `ClientSession` does the initialize handshake and
`tools/list`, page after page while the server returns a `nextCursor`. Everything - start,
handshake, every page - runs under one deadline; a server that does not start, exits, answers
something that is not MCP or does not answer in time is an input error naming the server, never
a verdict.

A server is an untrusted input like a tool file, so what it lists is bounded three ways besides
the deadline: at most `MAX_PAGES` pages, `MAX_TOOLS` tools, and tool definitions of at most an
eighth of `max_input_mb` as JSON in all (`LISTED_SHARE`: 4 MB by default, where a large real
server lists a few hundred KB; the definitions are held as Python objects, several times their
JSON, and each is measured against every adapter). Past any of them the read stops at once with
one line naming the cap (a server that pages forever once took 3 GB). On stdio, one message is
held to the same cap as it arrives.

A stdio server gets the SDK's default environment (HOME, PATH, ... but no credentials of this
process); a server that needs a variable is started through `env NAME=value command ...`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shlex
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from xpeval.evals.acceptance.sources.tool_files import FoundTool, ToolsInputError, read_document
from xpeval.evals.project import input_limits
from xpeval.evals.untrusted import MB

DEFAULT_TIMEOUT = 30.0
"""Seconds for the whole conversation with one server: start, handshake, every tools/list page."""
MAX_PAGES = 50
"""A server whose cursors never end is refused rather than followed forever (a page takes 10 to
30 ms over stdio on a busy machine, so refusing costs under two seconds; servers built with the
SDK list every tool on one page)."""
LISTED_SHARE = 8
"""What one server may list, as a share of `max_input_mb`."""
MAX_TOOLS = 10_000
"""The most tools read from one server (each is measured against every adapter)."""


def is_url(server: str) -> bool:
    return server.startswith(("http://", "https://"))


def server_label(server: str) -> str:
    """How the server is named in rows, reports and errors: no credentials (a URL's user info
    and credential query values, a command's `NAME=value` assignments and every known secret
    are replaced)."""
    from xpeval.evals.scrub import PLACEHOLDER, current_scrubber, scrub_query

    if is_url(server):
        parts = urlsplit(server)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        text = scrub_query(urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")))
    else:
        try:
            words = shlex.split(server)
        except ValueError:
            words = server.split()
        shown = [
            f"{word.split('=', 1)[0]}={PLACEHOLDER}"
            if "=" in word and word.split("=", 1)[0].isidentifier()
            else word
            for word in words
        ]
        text = shlex.join(shown)
    return current_scrubber().text(text)


def read_mcp_tools(servers: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT) -> list[FoundTool]:
    """The tools of every server, in the order listed, keyed by tool name. Raises
    `ToolsInputError` naming the server and why it could not be read."""
    import anyio

    found: list[FoundTool] = []
    for server in servers:
        label = server_label(server)
        listed = anyio.run(_list_tools_or_problem, server, timeout)
        if isinstance(listed, str):
            raise ToolsInputError(f"MCP server {label}: {listed}")
        try:
            tools, _ = read_document({"tools": listed})
        except Exception as exc:  # the tool objects the server listed are not tools
            raise ToolsInputError(f"MCP server {label}: {exc}") from exc
        found += [
            FoundTool(key=item.name, spec=item.spec, form="mcp", source=f"mcp: {label}") for item in tools
        ]
    return found


class _SdkLog(logging.Handler):
    """What the SDK logs while one server is read. Kept off the terminal (it logs a server's
    non-JSON-RPC line with a traceback); a reason is derived from it instead."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.not_json_rpc = False
        self.too_deep = False
        """A line was JSON-RPC nested deeper than the SDK's parser reads (pydantic's JSON
        recursion limit), not a line that is not JSON-RPC."""

    def emit(self, record: logging.LogRecord) -> None:
        if "Failed to parse JSONRPC message" in record.getMessage():
            error = record.exc_info[1] if record.exc_info else None
            if error is not None and "recursion limit exceeded" in str(error):
                self.too_deep = True
            else:
                self.not_json_rpc = True


@contextlib.contextmanager
def _sdk_log() -> Iterator[_SdkLog]:
    """What the SDK and this module's stdio transport log while one server is read."""
    handler = _SdkLog()
    loggers = [logging.getLogger("mcp"), _LOG]
    saved = [logger.propagate for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield handler
    finally:
        for logger, propagate in zip(loggers, saved, strict=True):
            logger.removeHandler(handler)
            logger.propagate = propagate


async def _list_tools_or_problem(server: str, timeout: float) -> list[dict[str, Any]] | str:
    """The server's tools as JSON objects (MCP wire names), or why there are none."""
    import anyio

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog, _sdk_log() as log:
        try:
            with anyio.fail_after(timeout):
                return await list_tools(server, errlog=errlog, timeout=timeout)
        except TimeoutError:
            reason = f"no answer within {timeout:g}s (start, initialize and tools/list)"
        except ToolsInputError as exc:
            return str(exc)
        except Exception as exc:  # whatever the transport or the server did: the reason is its message
            reason = _reason(exc, server)
        if log.too_deep:
            reason += (
                "; its answer is nested deeper than the MCP SDK's JSON parser reads (pydantic's "
                "recursion limit): a schema that deep can be checked from a file with --tools"
            )
        if log.not_json_rpc:
            reason += "; what it wrote to stdout is not JSON-RPC"
        return _with_stderr(reason, errlog)


async def list_tools(server: str, *, errlog: TextIO, timeout: float) -> list[dict[str, Any]]:
    """tools/list of one server, every page: `ClientSession.list_tools` with the cursor of the
    previous page until the server returns none."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import PaginatedRequestParams

    message_cap = input_limits().max_bytes // LISTED_SHARE
    async with AsyncExitStack() as stack:
        if is_url(server):
            read, write = await stack.enter_async_context(streamable_http_client(server))
        else:
            try:
                argv = shlex.split(server)
            except ValueError as exc:
                raise ToolsInputError(f"the command cannot be split into words ({exc})") from exc
            if not argv:
                raise ToolsInputError("an empty command")
            read, write = await stack.enter_async_context(_bounded_stdio(argv, errlog, message_cap))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=timeout))
        await session.initialize()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        budget = _ListedBudget(message_cap)
        for _ in range(MAX_PAGES):
            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            for tool in page.tools:
                tools.append(budget.take(tool.model_dump(by_alias=True, exclude_none=True, mode="json")))
            cursor = page.next_cursor
            del page
            if cursor is None:
                return tools
            if cursor in seen:
                raise ToolsInputError(f"tools/list pagination loops (cursor {cursor!r} came back)")
            seen.add(cursor)
        raise ToolsInputError(f"tools/list still has more pages after {MAX_PAGES} (the cap on pages read)")


STOP_GRACE = 2.0
"""Seconds a stdio server is given to exit once its stdin is closed, before it is killed."""
_CHUNK = 64 * 1024
_LOG = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def _bounded_stdio(argv: list[str], errlog: TextIO, cap: int) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport with each message bounded: the server's stdout is read a chunk
        at a time and split into JSON-RPC lines, and a line longer than `cap` bytes ends the read
        with ToolsInputError before more of it is held (the SDK's own `stdio_client` holds a line of
        any length). The server gets the SDK's default environment, its own process group, and on
        leaving its stdin closed, `STOP_GRACE` seconds to exit (none after an oversized message: it
    may be blocked writing the rest), then SIGKILL to its group."""
    import os
    import signal
    import subprocess

    import anyio
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    process = await anyio.open_process(
        argv, env=get_default_environment(), stderr=errlog, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    oversize: list[int] = []  # a server sending more than a message may be: stopped at once

    async def reader() -> None:
        buffer = bytearray()
        async with to_session:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                while True:
                    buffer += await stdout.receive(_CHUNK)
                    while (end := buffer.find(b"\n")) >= 0:
                        line = bytes(buffer[:end])
                        del buffer[: end + 1]
                        if line.strip():
                            await to_session.send(_message(line))
                    if len(buffer) > cap:
                        oversize.append(len(buffer))
                        raise ToolsInputError(
                            f"the server sent a message of more than {cap / MB:g} MB (an eighth of "
                            f"max_input_mb, the cap on one message and on all tools listed)"
                        )

    def _message(line: bytes) -> SessionMessage | Exception:
        try:
            return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:
            _LOG.warning("Failed to parse JSONRPC message from server", exc_info=exc)
            return exc

    async def writer() -> None:
        async with from_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((text + "\n").encode())

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            group.start_soon(writer)
            try:
                yield read, write
            finally:
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stdin.aclose()
            with anyio.move_on_after(0 if oversize else STOP_GRACE):
                await process.wait()
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if hasattr(os, "killpg"):  # the server's group: what it started goes too
                        os.killpg(process.pid, signal.SIGKILL)
                    else:
                        process.kill()
            # bounded: on asyncio a wait also waits for the pipes' end, which a descendant in
            # another session could hold open
            with anyio.move_on_after(STOP_GRACE):
                await process.aclose()


class _ListedBudget:
    """What one server may still list: tools and bytes of their definitions as JSON."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.count = 0

    def take(self, tool: dict[str, Any]) -> dict[str, Any]:
        """`tool`, counted; ToolsInputError past a cap."""
        from xpeval.evals.untrusted import RAISE_HINT

        self.count += 1
        if self.count > MAX_TOOLS:
            raise ToolsInputError(f"tools/list lists more than {MAX_TOOLS:,} tools (the cap on tools read)")
        self.size += len(json.dumps(tool, ensure_ascii=False).encode())
        if self.size > self.max_bytes:
            raise ToolsInputError(
                f"tools/list lists more than {self.max_bytes / MB:g} MB of tool definitions (an eighth of "
                f"max_input_mb: {RAISE_HINT.format(key='max_input_mb')})"
            )
        return tool


def _reason(exc: BaseException, server: str) -> str:
    leaf = _first_leaf(exc)
    if isinstance(leaf, FileNotFoundError) and not is_url(server):
        return f"cannot start the command ({leaf.strerror or leaf}: {shlex.split(server)[0]!r})"
    if isinstance(leaf, OSError) and not is_url(server):
        return f"cannot start the command ({leaf})"
    if isinstance(leaf, ToolsInputError):
        return str(leaf)
    text = str(leaf).strip().splitlines()
    message = text[0] if text else ""
    name = type(leaf).__name__
    if name == "MCPError":
        if "Connection closed" in message:
            return "the server closed the connection before answering (it exited, or is not an MCP server)"
        return f"the server answered with an MCP error: {message}"
    if "Connect" in name or "Timeout" in name:  # httpx2's ConnectError, ConnectTimeout, ReadTimeout
        return f"cannot connect ({name}: {message})" if message else f"cannot connect ({name})"
    return f"{name}: {message}" if message else name


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside the task groups' exception groups (the one that says why)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _with_stderr(reason: str, errlog: TextIO) -> str:
    """`reason` and the last line the server wrote to its stderr, if any."""
    try:
        errlog.seek(0)
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        lines = []
    if not lines:
        return reason
    from xpeval.evals.scrub import current_scrubber

    return f"{reason}; its stderr ends: {current_scrubber().text(lines[-1])[:200]}"
