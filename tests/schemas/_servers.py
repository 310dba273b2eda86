"""MCP servers written with the official SDK, as scripts a test writes into its tmp_path and
starts the way a user would (a command line on stdio, or a URL on loopback)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOOLS_SERVER = '''
from __future__ import annotations

from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer


class Node(BaseModel):
    label: str
    children: list[Node] = []


server = MCPServer("xpeval-test")


@server.tool()
def get_weather(city: str) -> str:
    """The weather in a city."""
    return city


@server.tool()
def build_tree(root: Node) -> str:
    """A tree of labels: a recursive $ref, which Gemini `parameters` cannot write."""
    return root.label


@server.tool()
def set_labels(labels: dict[str, str]) -> str:
    """Free-form labels: an open object, which OpenAI strict mode cannot write."""
    return ",".join(labels)
'''

STDIO_MAIN = """
if __name__ == "__main__":
    server.run()
"""

HTTP_MAIN = """
if __name__ == "__main__":
    import socket

    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(sock.getsockname()[1], flush=True)  # the test reads the port the system gave
    config = uvicorn.Config(server.streamable_http_app(host="127.0.0.1"), log_level="warning")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
"""

PAGED_SERVER = """
import sys

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LOOP = "--loop" in sys.argv
TOOLS = [
    types.Tool(name=f"tool_{i}", description="", input_schema={"type": "object", "properties": {}})
    for i in range(5)
]


async def list_tools(ctx, params):
    start = int(params.cursor) if params is not None and params.cursor else 0
    if LOOP:  # a server whose cursor never moves on
        return types.ListToolsResult(tools=TOOLS[:1], next_cursor="1")
    end = start + 2
    return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None)


server = Server("paged", on_list_tools=list_tools)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


ENDLESS_SERVER = """
import sys

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# a server whose tools/list never ends: every page a new cursor, PER_PAGE tools of SIZE bytes
PER_PAGE, SIZE = int(sys.argv[1]), int(sys.argv[2])
DESCRIPTION = "d" * SIZE


async def list_tools(ctx, params):
    page = int(params.cursor) if params is not None and params.cursor else 0
    tools = [
        types.Tool(name=f"tool_{page}_{i}", description=DESCRIPTION, input_schema={"type": "object"})
        for i in range(PER_PAGE)
    ]
    return types.ListToolsResult(tools=tools, next_cursor=str(page + 1))


server = Server("endless", on_list_tools=list_tools)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


GIANT_SERVER = """
import json
import sys

# a raw JSON-RPC server whose tools/list answer is one line of sys.argv[1] bytes, written in pieces
SIZE = int(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = json.dumps({"protocolVersion": message["params"]["protocolVersion"],
                             "capabilities": {"tools": {}}, "serverInfo": {"name": "giant", "version": "1"}})
        head = '{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"])
        sys.stdout.write(head + ', "result": ' + result + '}\\n')
        sys.stdout.flush()
        continue
    sys.stdout.write('{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"]) + ', "result": {"tools": [')
    sys.stdout.write('{"name": "big", "inputSchema": {"type": "object"}, "description": "')
    piece = "d" * (1 << 20)
    for _ in range(SIZE >> 20):
        sys.stdout.write(piece)
    sys.stdout.write('"}]}}\\n')
    sys.stdout.flush()
"""


DEEP_SERVER = """
import json
import sys

# a raw JSON-RPC server (no SDK: its own serializer would stop first): one tool 100 levels deep
schema = '{"type": "string"}'
for _ in range(100):
    schema = '{"type": "object", "properties": {"child": ' + schema + '}}'
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = json.dumps({"protocolVersion": message["params"]["protocolVersion"],
                             "capabilities": {"tools": {}}, "serverInfo": {"name": "deep", "version": "1"}})
    elif message["method"] == "tools/list":
        result = '{"tools": [{"name": "deep", "description": "deep", "inputSchema": ' + schema + '}]}'
    else:
        result = "{}"
    answer = '{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"]) + ', "result": ' + result + '}'
    sys.stdout.write(answer + "\\n")
    sys.stdout.flush()
"""


def script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def command(path: Path, *args: str) -> str:
    """The `--mcp` value that starts `path` with this interpreter (the test's own venv)."""
    return shlex.join([sys.executable, str(path), *args])


def stdio_tools_server(tmp_path: Path) -> str:
    return command(script(tmp_path, "tools_server.py", TOOLS_SERVER + STDIO_MAIN))


@contextmanager
def http_tools_server(tmp_path: Path) -> Iterator[str]:
    """The tools server on streamable HTTP on a loopback port; its URL while the block runs."""
    path = script(tmp_path, "http_server.py", TOOLS_SERVER + HTTP_MAIN)
    process = subprocess.Popen(
        [sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        assert port.isdigit(), f"the server did not start (exit {process.poll()})"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
