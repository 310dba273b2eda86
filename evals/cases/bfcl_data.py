"""Find and read the BFCL data shipped in the installed `bfcl-eval` package.

The package is located with `importlib.util.find_spec`, never imported: importing it pulls
its heavy pinned dependencies and creates folders unless `BFCL_PROJECT_ROOT` is set. The data
folder holds one JSON Lines file per category (`BFCL_v<N>_<category>.json`) and the possible
answers under `possible_answer/` with the same file names.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xpeval.evals.cases.bfcl import CATEGORY_MAP, BfclConversionError, convert_entry
from xpeval.evals.cases.bfcl_multi_turn import MULTI_TURN_CATEGORIES, convert_multi_turn_entry
from xpeval.evals.cases.environment import BFCL_CLASSES, BFCL_INSTALL_HINT
from xpeval.evals.cases.model import Case

INSTALL_HINT = BFCL_INSTALL_HINT

_FILE_NAME = re.compile(r"^BFCL_v(\d+)_(.+)\.json$")


class BfclDataError(Exception):
    """bfcl-eval is missing, or its data folder is not what this importer reads."""


@dataclass(frozen=True)
class Converted:
    """The outcome for one BFCL entry: a case, or the reason it was skipped."""

    bfcl_category: str
    entry_id: str
    case: Case | None
    skipped: str | None


def bfcl_data_dir() -> Path:
    """The data folder of the installed bfcl-eval package (without importing it)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BfclDataError(f"the bfcl-eval package is not installed; {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        data = Path(location) / "data"
        if data.is_dir():
            return data
    raise BfclDataError(f"bfcl-eval is installed but has no data folder; reinstall it: {INSTALL_HINT}")


def category_files(data_dir: Path) -> dict[str, Path]:
    """BFCL category -> its entries file (the newest BFCL version when several are present)."""
    found: dict[str, tuple[int, Path]] = {}
    for path in data_dir.glob("BFCL_v*_*.json"):
        match = _FILE_NAME.match(path.name)
        if match is None:
            continue
        version, category = int(match.group(1)), match.group(2)
        if category not in found or version > found[category][0]:
            found[category] = (version, path)
    return {category: path for category, (_, path) in sorted(found.items())}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (blank lines ignored)."""
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BfclDataError(f"{path}: line {number}: invalid JSON: {exc.msg}") from exc
            if not isinstance(row, dict):
                raise BfclDataError(f"{path}: line {number}: expected a JSON object")
            rows.append(row)
    return rows


def convert_category(data_dir: Path, bfcl_category: str) -> Iterator[Converted]:
    """Every entry of one importable BFCL category, converted or skipped with its reason."""
    if bfcl_category not in CATEGORY_MAP and bfcl_category not in MULTI_TURN_CATEGORIES:
        raise BfclDataError(f"BFCL category {bfcl_category!r} is not importable")
    files = category_files(data_dir)
    if bfcl_category not in files:
        raise BfclDataError(f"{data_dir}: no data file for BFCL category {bfcl_category!r}")
    entries_file = files[bfcl_category]
    answers_file = entries_file.parent / "possible_answer" / entries_file.name
    answers = {str(row.get("id")): row for row in read_jsonl(answers_file)} if answers_file.exists() else {}
    convert = (
        _multi_turn_converter(data_dir, bfcl_category)
        if bfcl_category in MULTI_TURN_CATEGORIES
        else convert_entry
    )
    for entry in read_jsonl(entries_file):
        entry_id = str(entry.get("id"))
        try:
            case = convert(entry, answers.get(entry_id), bfcl_category)
        except BfclConversionError as exc:
            yield Converted(bfcl_category, entry_id, None, str(exc))
        else:
            yield Converted(bfcl_category, entry_id, case, None)


def _multi_turn_converter(data_dir: Path, bfcl_category: str) -> Callable[..., Case]:
    """`convert_multi_turn_entry` with what it reads from the package: the API classes' function
    documents, their methods' parameter names, and the user message of a held-out turn."""
    try:
        from bfcl_eval.constants.default_prompts import (  # type: ignore[import-not-found, unused-ignore]
            DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
        )
        from bfcl_eval.constants.executable_backend_config import (  # type: ignore[import-not-found, unused-ignore]
            MULTI_TURN_FUNC_DOC_FILE_MAPPING,
        )
    except ImportError as exc:
        raise BfclDataError(f"bfcl-eval's constants cannot be read ({exc}); {INSTALL_HINT}") from exc
    docs_dir = data_dir / "multi_turn_func_doc"
    docs = {
        name: read_jsonl(docs_dir / MULTI_TURN_FUNC_DOC_FILE_MAPPING[name])
        for name in BFCL_CLASSES
        if name in MULTI_TURN_FUNC_DOC_FILE_MAPPING
        and (docs_dir / MULTI_TURN_FUNC_DOC_FILE_MAPPING[name]).exists()
    }

    def convert(entry: dict[str, Any], answer: dict[str, Any] | None, category: str) -> Case:
        return convert_multi_turn_entry(
            entry,
            answer,
            category,
            docs,
            _parameter_names,
            str(DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC),
        )

    return convert


def _parameter_names(class_name: str, method: str) -> list[str]:
    """The parameters of an API class's method, in order (how BFCL's `eval` binds positional ones)."""
    from xpeval.evals.runtime.environment import EnvironmentUnavailable, load_class

    try:
        function = getattr(load_class(class_name), method)
    except (EnvironmentUnavailable, AttributeError) as exc:
        raise BfclConversionError(f"{class_name}.{method}: {exc}") from exc
    parameters = list(inspect.signature(function).parameters)
    return parameters[1:] if parameters[:1] == ["self"] else parameters
