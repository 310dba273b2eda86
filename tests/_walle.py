"""Moonshot's own schema validator (walle), used as an oracle from the shared folder's
`oracles/moonshot-walle` (beside the repository, like the corpus).

Called through its own Python wrapper at the level walle's README (at the oracle's commit) names
as what Moonshot's server requires (`strict`); nothing of it is copied into the repository. Tests
skip with a reason where the oracle is absent.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import CORPUS, SHARED

ORACLE = SHARED / "oracles" / "moonshot-walle"
CASES = ORACLE / "testdata" / "validator_cases"
SKIP_REASON = (
    "Moonshot's validator (../shared/oracles/moonshot-walle next to the repository) is absent: "
    "the oracle tests run only where it is checked out"
)
LEVEL = "strict"


@cache
def _validator() -> Callable[[str, dict[str, Any]], None] | None:
    library = ORACLE / "python" / "walle" / "lib" / "libwalle.so"
    if not library.exists():
        return None
    sys.path.insert(0, str(ORACLE / "python"))
    from walle.validator import WalleValidator

    validate: Callable[[str, dict[str, Any]], None] = WalleValidator(str(library)).validate_schema
    return validate


def walle_strict() -> Callable[[Any], str | None]:
    """A function: schema (as xpeval would send it, `json.dumps`) -> walle-strict's error, or None."""
    validate = _validator()
    if validate is None:
        pytest.skip(SKIP_REASON)

    def judge(schema: Any) -> str | None:
        try:
            validate(json.dumps(schema), {"validateLevel": LEVEL})
        except ValueError as error:
            return str(error)
        return None

    return judge


def wrapped(case: Any) -> dict[str, Any]:
    """A case as Kimi's vendor verifier sends it: one required property of a closed object, with
    `$defs`/`$id` lifted to the root (as the oracle folder's README describes it)."""
    inner = dict(case) if isinstance(case, dict) else case
    root: dict[str, Any] = {"type": "object", "required": ["value"], "additionalProperties": False}
    if isinstance(inner, dict):
        for key in ("$defs", "$id"):
            if key in inner:
                root[key] = inner.pop(key)
    root["properties"] = {"value": inner}
    return root


def cases() -> Iterator[tuple[str, Any]]:
    """(label, schema) for every line of walle's suite that is JSON Python reads (valid and invalid)."""
    for suite in sorted(p for p in CASES.iterdir() if p.is_dir()) if CASES.exists() else ():
        for kind in ("valid", "invalid"):
            path = suite / f"{kind}.jsonl"
            for number, line in enumerate(path.read_text().splitlines() if path.exists() else (), 1):
                if not line.strip():
                    continue
                text = line if kind == "valid" else json.loads(line)["schema"]
                try:
                    schema = json.loads(text)
                except ValueError:
                    continue  # not a document xpeval could hold (walle's unmarshal cases)
                yield f"{suite.name}/{kind}:{number}", schema


def corpus_schemas() -> Iterator[tuple[str, Any]]:
    """(label, parameters) for every tool of ../shared/corpus/schemas."""
    root = CORPUS / "schemas"
    for path in sorted(root.rglob("*.json")) if root.exists() else ():
        tool = json.loads(path.read_text())
        yield str(path.relative_to(root)), tool.get("parameters", tool.get("input_schema"))


def require_oracle() -> None:
    if not (CASES.exists() and (ORACLE / "python").exists()):
        pytest.skip(SKIP_REASON)
    if not Path(CORPUS / "schemas").exists():
        pytest.skip("the shared corpus (../shared/corpus) is absent")
