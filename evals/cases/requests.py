"""Real traffic as cases: OpenAI Chat Completions request bodies, one JSON object per line
(`messages`, `tools`, `tool_choice`, optional `parallel_tool_calls`: the vendor verifier's sample
format), each an `unlabelled` case judged against a reference row (docs/reference-runs.md).

Case ids are `<prefix>_<line number>`, so a case names the line it came from. A file with any
line that cannot become a case is refused whole, naming every such line (the first few with
their reason): a partial import would judge vendors on a different request set than intended.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from xpeval.adapters.schema.safe_json import JsonDepthError, loads
from xpeval.adapters.wires.openai_chat_request import request_from_body
from xpeval.evals.cases.model import Case
from xpeval.evals.errors import UserError

MAX_LINE_DEPTH = 200
"""Deepest JSON a line may nest (a request body is a few levels; a schema a few dozen)."""
SHOWN_PROBLEMS = 5


@dataclass(frozen=True)
class ImportedRequests:
    cases: list[Case]
    ignored: Counter[str]
    """Keys left to the run (model, sampling, streaming), with how many lines had each."""


def default_prefix(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.:-]+", "_", path.stem).strip("_") or "request"


def cases_from_requests(path: Path, *, prefix: str | None = None) -> ImportedRequests:
    """Every line of `path` as a case; UserError naming each line that cannot be one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read it: {exc}") from exc
    label = prefix or default_prefix(path)
    cases: list[Case] = []
    ignored: Counter[str] = Counter()
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case, keys = _case(line, f"{label}_{number:05d}")
        except ValueError as exc:
            problems.append(f"line {number}: {' '.join(str(exc).split())}")
            continue
        cases.append(case)
        ignored.update(keys)
    if problems:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
        raise UserError(f"{path}: {len(problems)} line(s) are not requests a case can carry: {shown}{more}")
    if not cases:
        raise UserError(f"{path}: no request in it")
    return ImportedRequests(cases, ignored)


def _case(line: str, case_id: str) -> tuple[Case, list[str]]:
    try:
        body = loads(line, max_depth=MAX_LINE_DEPTH)
    except JsonDepthError as exc:
        raise ValueError(str(exc)) from exc
    except ValueError as exc:
        raise ValueError(f"invalid JSON: {exc}") from exc
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
