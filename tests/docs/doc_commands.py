"""The shell commands README.md and docs/*.md show, read out of their fenced blocks with what the
documents say about running them (CONTRIBUTING.md, "Commands in the documents").

A fenced `bash`/`sh`/`shell`/`console` block is a list of commands: a line ending in `\\` goes on
with the next, a compound (`for ... done`) is one command, and a comment-only line is none.
Commands are numbered from 1 in their block. An HTML comment right above the fence (nothing but
blank lines between) holds directives, one a line:

    <!-- xpeval-docs: in checkout -->
    <!-- xpeval-docs: skip 2,3 — needs the local model's install -->
    <!-- xpeval-docs: exit 1 at 2 — the vendor row differs from its reference, as the text says -->
    <!-- xpeval-docs: slow 1 — replays every committed cassette (35-60 s) -->

- `in checkout` (the default): a copy of what a clone of this repository holds beside its code
  (`CHECKOUT`); `in project NAME`: a user's own project, the folder `tests/docs/projects/NAME`.
- `skip [N,...] — why`: not run (all of the block's commands without numbers); the reason is
  required and shown.
- `exit CODE [at N,...] — why`: the command exits CODE (default 0 for every command).
- `slow [N,...] — why`: the command's test is marked `slow`.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console"})
PROJECTS = Path(__file__).resolve().parent / "projects"

CHECKOUT = (
    "pyproject.toml",
    "cassettes",
    "bfcl",
    "tasks",
    "vendors",
    "examples",
    "notebooks",
    "reports/baseline.json",
)
"""What the documents run in a checkout work on: the repository's data, not its code (the xpeval
under test is the installed one)."""

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<language>[\w-]*)")
MARKER = re.compile(r"<!--\s*xpeval-docs:(?P<body>.*?)-->", re.DOTALL)
NUMBERS = r"(?P<which>\d+(?:\s*,\s*\d+)*)"
DIRECTIVE = re.compile(
    r"^(?:in\s+(?P<scratch>checkout|project\s+[\w-]+)"
    rf"|(?P<kind>skip|slow)(?:\s+{NUMBERS})?\s*(?:[—-]+\s*(?P<why>.+))?"
    rf"|(?P<exit>exit)\s+(?P<code>\d+)(?:\s+at\s+{NUMBERS.replace('which', 'at')})?"
    r"\s*(?:[—-]+\s*(?P<exit_why>.+))?)$"
)


T = TypeVar("T")


class MarkerError(ValueError):
    """A directive the documents' grammar does not have (the test fails on it, naming its line)."""


@dataclass(frozen=True)
class DocCommand:
    """One command of a document, where it is, where it runs and what it must exit with."""

    document: str
    line: int
    block: int
    number: int
    text: str
    scratch: str
    expected_exit: int
    skip: str | None
    slow: bool

    @property
    def id(self) -> str:
        return f"{self.document}:{self.line}"


@dataclass
class _Directives:
    scratch: str = "checkout"
    skip: dict[int | None, str] = field(default_factory=dict)
    exits: dict[int | None, int] = field(default_factory=dict)
    slow: set[int | None] = field(default_factory=set)


def _pick(table: dict[int | None, T], number: int, default: T) -> T:
    return table.get(number, table.get(None, default))


def _directives(text: str, where: str) -> _Directives:
    found = _Directives()
    for marker in MARKER.finditer(text):
        for raw in marker.group("body").splitlines():
            directive = raw.strip()
            if not directive:
                continue
            match = DIRECTIVE.match(directive)
            if match is None:
                raise MarkerError(f"{where}: unknown xpeval-docs directive {directive!r}")
            if match.group("scratch"):
                found.scratch = " ".join(match.group("scratch").split())
                continue
            kind = match.group("kind") or "exit"
            why = match.group("why") or match.group("exit_why")
            listed = match.group("which") or match.group("at")
            numbers: list[int | None] = [int(n) for n in listed.split(",")] if listed else [None]
            if not why:
                raise MarkerError(f"{where}: {directive!r} says no reason (`— why`)")
            for number in numbers:
                if kind == "skip":
                    found.skip[number] = why
                elif kind == "slow":
                    found.slow.add(number)
                else:
                    found.exits[number] = int(match.group("code"))
    return found


def _complete(text: str) -> bool:
    """Whether `text` is whole shell syntax (a `for` with its `done`), asked of bash itself."""
    checked = subprocess.run(["bash", "-n", "-c", text], capture_output=True, text=True)
    return checked.returncode == 0 or "unexpected end of file" not in checked.stderr


def _commands(body: list[str]) -> list[tuple[int, str]]:
    """(offset of its first line in the block, command) for each command of a block."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for offset, line in enumerate(body):
        if not pending:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            start = offset
        pending.append(line)
        if line.rstrip().endswith("\\"):
            continue
        text = "\n".join(pending)
        if _complete(text):
            found.append((start, text))
            pending = []
    if pending:
        found.append((start, "\n".join(pending)))
    return found


def read_commands(document: Path, name: str | None = None) -> list[DocCommand]:
    """Every command of `document`'s shell blocks (MarkerError on a directive it cannot read),
    named by its path in the repository (or `name`)."""
    name = name or str(document.relative_to(REPO))
    lines = document.read_text(encoding="utf-8").splitlines()
    found: list[DocCommand] = []
    index, block = 0, 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        opened = index
        body: list[str] = []
        index += 1
        while index < len(lines) and not lines[index].strip().startswith(fence.group("fence")):
            body.append(lines[index][len(fence.group("indent")) :])
            index += 1
        index += 1
        if fence.group("language") not in SHELL_LANGUAGES:
            continue
        block += 1
        directives = _directives(_comment_above(lines, opened), f"{name}:{opened + 1}")
        for number, (offset, text) in enumerate(_commands(body), start=1):
            skip: str | None = directives.skip.get(number, directives.skip.get(None))
            expected = _pick(directives.exits, number, 0)
            found.append(
                DocCommand(
                    document=name,
                    line=opened + 2 + offset,
                    block=block,
                    number=number,
                    text=text,
                    scratch=directives.scratch,
                    expected_exit=expected,
                    skip=skip,
                    slow=number in directives.slow or None in directives.slow,
                )
            )
    return found


def _comment_above(lines: list[str], fence: int) -> str:
    """The HTML comments right above a fence (blank lines between them allowed)."""
    index, top = fence - 1, fence
    while index >= 0:
        if not lines[index].strip():
            index -= 1
            continue
        if not lines[index].rstrip().endswith("-->"):
            break
        while index >= 0 and "<!--" not in lines[index]:
            index -= 1
        top = max(index, 0)
        index -= 1
    return "\n".join(lines[top:fence])


def every_command() -> list[DocCommand]:
    return [command for document in DOCUMENTS for command in read_commands(document)]


def changes_directory(text: str) -> str | None:
    """The folder of a command that is only `cd DIR` (the next commands run there)."""
    words = shlex.split(text, comments=True)
    return words[1] if len(words) == 2 and words[0] == "cd" else None
