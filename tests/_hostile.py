"""Hostile inputs a pull request can add: YAML alias bombs in a case file and in a cassette,
cassettes whose body is a gzip bomb, files far above the input cap.

Built here, never committed: each is a few lines of generation."""

from __future__ import annotations

import zlib
from functools import cache
from pathlib import Path

import yaml

LEVELS = 9
"""Nine anchors of nine aliases each: 9**9 = 387,420,489 strings from under a kilobyte."""


def alias_anchors(levels: int = LEVELS) -> str:
    """`x-l0` .. `x-l8`: each a list of nine aliases of the one before ("billion laughs")."""
    lines = ['x-l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"x-l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


TOP = f"*l{LEVELS - 1}"


def case_file_bomb_in_arguments() -> str:
    """A case whose expected argument values are the bomb: validating it walks every one."""
    return alias_anchors() + (
        "cases:\n"
        "  - id: bomb_simple_01\n"
        "    category: simple\n"
        "    tools:\n"
        "      - name: convert_units\n"
        "        description: Convert.\n"
        "        parameters: {type: object, properties: {value: {type: number}}, required: [value]}\n"
        "    messages:\n"
        '      - {role: user, content: "Convert 26.2."}\n'
        "    expected:\n"
        "      calls:\n"
        "        - name: convert_units\n"
        f"          arguments: {{value: {TOP}}}\n"
    )


def case_file_bomb_in_schema() -> str:
    """A case that validates (the bomb sits in a schema's `examples`) and explodes when the
    tools are serialized for a request."""
    return alias_anchors() + (
        "cases:\n"
        "  - id: bomb_simple_01\n"
        "    category: simple\n"
        "    tools:\n"
        "      - name: convert_units\n"
        "        description: Convert.\n"
        "        parameters:\n"
        "          type: object\n"
        f"          properties: {{value: {{type: number, examples: {TOP}}}}}\n"
        "          required: [value]\n"
        "    messages:\n"
        '      - {role: user, content: "Convert 26.2."}\n'
        "    expected:\n"
        "      calls:\n"
        "        - name: convert_units\n"
        "          arguments: {value: [26.2]}\n"
    )


CHAT_REQUEST = '{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
CHAT_ANSWER = (
    '{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": '
    '[{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}'
)


def cassette_alias_bomb() -> str:
    """A one-interaction chat cassette whose response header is the bomb."""
    return alias_anchors() + (
        "interactions:\n"
        "- request:\n"
        f"    body: '{CHAT_REQUEST}'\n"
        "    headers: {content-type: [application/json]}\n"
        "    method: POST\n"
        "    uri: https://api.openai.com/v1/chat/completions\n"
        "  response:\n"
        f"    body: {{string: '{CHAT_ANSWER}'}}\n"
        f"    headers: {{content-type: [application/json], x-bomb: {TOP}}}\n"
        "    status: {code: 200, message: OK}\n"
        "version: 1\n"
    )


def cassette_with_gzip_body(body: bytes) -> str:
    """A one-interaction chat cassette whose response body is `body`, as vcrpy writes a
    compressed one (`!!binary`, content-encoding gzip)."""
    document = {
        "interactions": [
            {
                "request": {
                    "body": CHAT_REQUEST,
                    "headers": {"content-type": ["application/json"]},
                    "method": "POST",
                    "uri": "https://api.openai.com/v1/chat/completions",
                },
                "response": {
                    "body": {"string": body},
                    "headers": {"content-type": ["application/json"], "content-encoding": ["gzip"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    return yaml.safe_dump(document)


@cache
def gzip_of_zeros(mib: int) -> bytes:
    """One gzip member of `mib` MiB of zeros (about 1 KB per MiB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    return b"".join([*(compressor.compress(zeros) for _ in range(mib)), compressor.flush()])


@cache
def gzip_of_4_gib_of_zeros() -> bytes:
    """Gzip of 4 GiB of zeros in 4 MB: 256 members of 16 MiB each, as `gzip -c` of the parts
    concatenated (what `gzip.decompress` and every gzip reader expand in full)."""
    return gzip_of_zeros(16) * 256


def sparse_file(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no disk (its size is all a reader sees first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path
