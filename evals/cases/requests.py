"""Real traffic as cases: OpenAI Chat Completions request bodies, one JSON object per line
(`messages`, `tools`, `tool_choice`, optional `parallel_tool_calls`: the vendor verifier's sample
format), each an `unlabelled` case judged against a reference row (docs/reference-runs.md).

Case ids are `<prefix>_<line number>`, so a case names the line it came from. The file is read
a line at a time, split at `\\n` only as JSON Lines defines it (`xpeval.evals.untrusted.json_lines`:
each line within its caps, any number of lines), and written a case at a time, so a file of any
size costs one line's memory. A line that cannot become a case exactly is a `Refusal` naming its
line and why; the other lines are imported (real traffic is imported as it is, and the refused
lines are listed), or, `strict`, nothing is written when any line is refused.

What is written is what `xpeval cases validate` and every case reader accept: case lines in
files of at most `max_input_mb` each (`<prefix>.jsonl`, then `<prefix>.2.jsonl`, ... when the
cases need more than one), written beside their final names and renamed at the end, so a
failed import leaves no partial file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from xpeval.adapters.schema.safe_json import JsonDepthError, loads
from xpeval.adapters.wires.openai_chat_request import request_from_body
from xpeval.errors import UserError
from xpeval.evals.cases.model import Case
from xpeval.evals.untrusted import InputLimits, InputRefused, check_json_values, json_lines

MAX_LINE_DEPTH = 200
"""Deepest JSON a line may nest (a request body is a few levels; a schema a few dozen)."""
MAX_REASON_CHARS = 300
"""What a refusal's reason keeps (a reason may quote a key of the line)."""


@dataclass(frozen=True)
class Refusal:
    """A line that did not become a case, and why (one line)."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class RequestCase:
    """A line that became a case, and the keys of it left to the run that plays the case."""

    line: int
    case: Case
    ignored: list[str]


@dataclass
class ImportedRequests:
    """What an import wrote (nothing when `strict` and a line was refused) and what it refused."""

    cases: int = 0
    files: list[Path] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    """Keys left to the run (model, sampling, streaming), with how many imported lines had each."""


def default_prefix(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.:-]+", "_", path.stem).strip("_") or "request"


def read_requests(path: Path, *, prefix: str, limits: InputLimits) -> Iterator[RequestCase | Refusal]:
    """Each non-blank line of `path` as a case or a refusal, in order, one line held at a time.
    UserError when the file cannot be opened or read."""
    try:
        for number, line in json_lines(path, limits):
            if isinstance(line, InputRefused):
                yield Refusal(number, str(line))
                continue
            try:
                case, ignored = _case(line, f"{prefix}_{number:05d}", limits)
            except (ValueError, InputRefused) as exc:
                yield Refusal(number, " ".join(str(exc).split())[:MAX_REASON_CHARS])
                continue
            yield RequestCase(number, case, ignored)
    except OSError as exc:
        raise UserError(f"{path}: cannot read it: {exc}") from exc


def import_requests(
    path: Path,
    out: Path,
    *,
    prefix: str | None = None,
    strict: bool = False,
    limits: InputLimits | None = None,
) -> ImportedRequests:
    """Every line of `path` that is a request, written as cases into the folder `out`; the
    refused lines listed. With `strict`, nothing is written when a line is refused."""
    from xpeval.evals.project import input_limits

    limits = limits or input_limits()
    label = prefix or default_prefix(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        out.mkdir(parents=True, exist_ok=True)
        return _write(path, out, label, strict, limits)
    except OSError as exc:  # the folder is a file, unwritable, or the disk is full: nothing kept
        raise UserError(f"{out}: cannot write the cases there: {exc}") from exc


def _write(path: Path, out: Path, label: str, strict: bool, limits: InputLimits) -> ImportedRequests:
    result = ImportedRequests()
    with _CaseFiles(out, label, limits.max_bytes) as files:
        for item in read_requests(path, prefix=label, limits=limits):
            if isinstance(item, Refusal):
                result.refused.append(item)
                continue
            encoded = (json.dumps(item.case.model_dump(mode="json"), ensure_ascii=False) + "\n").encode()
            if len(encoded) > limits.max_bytes:  # only when max_input_mb is below what a line may be
                result.refused.append(
                    Refusal(item.line, "its case is above the max_input_mb cap on a case file")
                )
                continue
            files.write(encoded)
            result.cases += 1
            result.ignored.update(item.ignored)
        if result.cases and not (strict and result.refused):
            result.files = files.commit()
    return result


class _CaseFiles:
    """Case lines into `<label>.jsonl`, `<label>.2.jsonl`, ..., each at most `cap` bytes; written
    as hidden partial files, renamed by `commit`, removed when it is not called."""

    def __init__(self, folder: Path, label: str, cap: int) -> None:
        self.folder, self.label, self.cap = folder, label, cap
        self.partial: list[Path] = []
        self.handle: Any = None
        self.size = 0

    def __enter__(self) -> _CaseFiles:
        return self

    def write(self, line: bytes) -> None:
        if self.handle is None or self.size + len(line) > self.cap:
            self._next()
        self.handle.write(line)
        self.size += len(line)

    def _next(self) -> None:
        if self.handle is not None:
            self.handle.close()
        path = self.folder / f".{self.label}.{len(self.partial) + 1}.jsonl.partial"
        self.partial.append(path)
        self.handle = path.open("wb")
        self.size = 0

    def final_name(self, index: int) -> Path:
        return self.folder / (f"{self.label}.jsonl" if index == 0 else f"{self.label}.{index + 1}.jsonl")

    def commit(self) -> list[Path]:
        self.handle.close()
        stale = re.compile(rf"{re.escape(self.label)}(\.[0-9]+)?\.jsonl")
        for old in self.folder.iterdir():  # parts of an earlier import of the same prefix
            if stale.fullmatch(old.name) and old.is_file():
                old.unlink()
        final = [self.final_name(i) for i in range(len(self.partial))]
        for partial, path in zip(self.partial, final, strict=True):
            partial.replace(path)
        self.partial = []
        return final

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()
        for partial in self.partial:
            partial.unlink(missing_ok=True)


def _case(line: bytes, case_id: str, limits: InputLimits) -> tuple[Case, list[str]]:
    check_json_values(line, limits)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        body = loads(text, max_depth=MAX_LINE_DEPTH)
    except JsonDepthError as exc:
        raise ValueError(str(exc)) from exc
    except ValueError as exc:
        raise ValueError(f"invalid JSON: {exc}") from exc
    del text
    request, ignored = request_from_body(body)
    try:
        case = Case(
            id=case_id,
            category="unlabelled",
            tools=request.tools,
            messages=request.messages,
            tool_choice=request.tool_choice,
            origin="requests",
        )
    except ValidationError as exc:
        from xpeval.evals.cases.loader import describe_validation_error

        raise ValueError(describe_validation_error(exc)) from exc
    return case, ignored
