"""Only `adapters/` knows a wire format: `evals/` spells no wire-format key.

Every string (and bytes) constant in `evals/**/*.py` is read with `ast`. A constant without
whitespace is code: a key, a path, an event name, a URL pattern (and so is every bytes constant:
a stream frame). It must not be, nor contain,
one of `WIRE_TOKENS`: request-envelope keys (where a request carries tools and schemas),
response keys, stream event names and terminal marks, request paths and query flags of the four
wires. A constant with whitespace is prose (a docstring, a message, a rule's summary quoting the
provider's own documentation or error text) and is not read: saying what a provider documents
is the acceptance checker's job; looking a key up by it is the wire's.

The honest line for the acceptance checker (`evals/acceptance/checker`, its `rules/` included): it may
name schema keywords (`type`, `properties`, `additionalProperties`, `$ref`, `format`, ...), since
the providers' rules are rules about schemas, and it may name its own modes and dialects; it may
not name where a request carries a tool (`function`, `input_schema`, `parametersJsonSchema`,
`functionDeclarations`): it asks the wire (`Wire.tool_layout`, `Wire.tool_definitions`).

Words that are also the canonical contract's field names or other formats' vocabulary (`tools`,
`messages`, `parameters`, `function`, `name`, `strict`, `tool_calls`, `finish_reason`, `model`: also
BFCL's import format and xpeval's own output) cannot be told apart by a scan; review keeps them
honest. Tests under `tests/` may of course spell any wire's bytes (they are fixtures).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

WIRE_TOKENS = (
    # OpenAI Chat Completions
    "/chat/completions",
    "choices",
    "chat.completion",
    "chat.completion.chunk",
    "function_call",
    "max_completion_tokens",
    "prompt_tokens",
    "completion_tokens",
    "[DONE]",
    # OpenAI Responses
    "/responses",
    "function_call_output",
    "output_text",
    "response.created",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.completed",
    "response.incomplete",
    # Anthropic Messages
    "/v1/messages",
    "input_schema",
    "tool_use",
    "tool_use_id",
    "tool_result",
    "stop_reason",
    "content_block_start",
    "content_block_delta",
    "input_json_delta",
    "message_start",
    "message_delta",
    "message_stop",
    # Google Gemini
    "generateContent",
    "streamGenerateContent",
    "alt=sse",
    "parametersJsonSchema",
    "parameters_json_schema",
    "function_declarations",
    "functionDeclarations",
    "functionCall",
    "function_response",
    "candidates",
    "finishReason",
    "usageMetadata",
    "promptTokenCount",
    "thoughtSignature",
    "thought_signature",
    "/models/",
)

EXCEPTIONS: dict[tuple[str, str], str] = {}
"""(file relative to the repository, token) -> why that file may spell it. Empty: nothing in
`evals/` needs one. An entry needs a one-line reason, and goes when it is no longer needed."""


def _constants(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, text, is code) for every string and bytes constant: bytes are always code."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Constant):
            continue
        if isinstance(node.value, bytes):
            yield node.lineno, node.value.decode("latin-1"), True
        elif isinstance(node.value, str):
            yield node.lineno, node.value, not any(character.isspace() for character in node.value)


def wire_tokens_in(path: Path) -> list[tuple[int, str, str]]:
    """(line, token, constant) for every code constant of `path` that spells a wire token."""
    return [
        (line, token, value)
        for line, value, code in _constants(path)
        if code
        for token in WIRE_TOKENS
        if token in value
    ]


def test_evals_spells_no_wire_format_key() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {token!r} in {value!r}"
        for path in sorted((REPO / "evals").rglob("*.py"))
        for line, token, value in wire_tokens_in(path)
        if (str(path.relative_to(REPO)), token) not in EXCEPTIONS
    ]
    assert found == [], "wire-format keys outside adapters/ (ask the wire instead):\n" + "\n".join(found)


def test_every_exception_is_still_needed_and_says_why() -> None:
    for (file, token), reason in EXCEPTIONS.items():
        assert reason.strip(), (file, token)
        assert any(t == token for _, t, _ in wire_tokens_in(REPO / file)), f"{file}: {token} no longer needed"


def test_every_token_is_spelled_by_some_wire_module() -> None:
    """The list is the wires' real vocabulary, not guesses: each token occurs in `adapters/wires`."""
    sources = "\n".join(
        value for path in (REPO / "adapters" / "wires").rglob("*.py") for _, value, _ in _constants(path)
    )
    assert [token for token in WIRE_TOKENS if token not in sources] == []


def test_the_scan_sees_keys_in_code_and_passes_over_prose(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Gemini streams at `:streamGenerateContent` with `alt=sse`."""\n'
        'PATH = r"/chat/completions/?(\\?|$)"\n'
        'KEY = {"input_schema": 1}\n'
        'FRAME = b"data: [DONE]"\n'
        'NOTE = "input_schema must be an object schema"\n'
    )
    assert {(line, token) for line, token, _ in wire_tokens_in(sample)} == {
        (2, "/chat/completions"),
        (3, "input_schema"),
        (4, "[DONE]"),
    }


def test_adapters_import_nothing_from_evals() -> None:
    """The boundary runs one way: evals asks the wires; the adapters know nothing of evals."""
    found: list[str] = []
    for path in sorted((REPO / "adapters").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found.extend(f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] == "evals")
    assert found == []
