"""xpeval's verdict on imported single-turn BFCL entries equals BFCL's own AST checker's.

The reference is bfcl-eval's `ast_checker` (2026.3.23), run on BFCL's own function docs and
possible answers; xpeval scores the same answers against the imported cases. The answers are
built from the ground truth: as listed, with every integer written as a float (`20.0`: BFCL's
type rule), with every integral float written as an integer, with a string changed, with the
last argument left out, and with the first call repeated. A seeded sample per category keeps
CI's budget; the numbers in the assertion messages say how many were compared.

`ast_checker` imports bfcl-eval's model table, which imports every provider SDK's handler; the
table is replaced here by one that never renames a function (the checker only reads it for
names holding a dot), so the checker itself runs unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from xpeval.evals.cases.model import Case

CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
SAMPLE = 24

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("bfcl_eval") is None,
    reason="bfcl-eval is not installed: pip install --no-deps bfcl-eval==2026.3.23",
)

Answer = list[dict[str, dict[str, Any]]]
"""BFCL's form of a model's calls: `[{function name: {argument: value}}]`."""


class _NoRenaming:
    underscore_to_dot = False


def _bfcl_ast_checker() -> Callable[..., dict[str, Any]]:
    """bfcl-eval's `ast_checker`, imported with its model table replaced (see the docstring)."""
    table = types.ModuleType("bfcl_eval.constants.model_config")
    table.MODEL_CONFIG_MAPPING = _AnyModel()  # type: ignore[attr-defined]
    saved = sys.modules.get(table.__name__)
    sys.modules[table.__name__] = table
    try:
        module = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    finally:
        if saved is None:
            sys.modules.pop(table.__name__, None)
        else:
            sys.modules[table.__name__] = saved
    return module.ast_checker


class _AnyModel(dict[str, _NoRenaming]):
    def __missing__(self, key: str) -> _NoRenaming:
        return _NoRenaming()


def _first(alternatives: list[Any]) -> Any:
    value = alternatives[0]
    if isinstance(value, dict):
        return {key: _first(alts) for key, alts in value.items() if alts and alts[0] != ""}
    return value


def _ground_truth(possible: list[dict[str, dict[str, list[Any]]]]) -> Answer:
    return [
        {name: {arg: _first(alts) for arg, alts in arguments.items() if alts and alts[0] != ""}}
        for call in possible
        for name, arguments in call.items()
    ]


def _map_values(answer: Answer, change: Callable[[Any], Any]) -> Answer:
    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [walk(item) for item in value]
        return change(value)

    return [
        {name: {arg: walk(v) for arg, v in args.items()} for name, args in call.items()} for call in answer
    ]


def _int_as_float(value: Any) -> Any:
    return float(value) if type(value) is int else value


def _float_as_int(value: Any) -> Any:
    return int(value) if type(value) is float and value.is_integer() else value


def _string_changed(answer: Answer) -> Answer:
    changed = json.loads(json.dumps(answer))
    for call in changed:
        for args in call.values():
            for arg, value in args.items():
                if isinstance(value, str):
                    args[arg] = value + " and more"
                    return changed
    return changed


def _last_argument_dropped(answer: Answer) -> Answer:
    changed = json.loads(json.dumps(answer))
    for call in reversed(changed):
        for args in call.values():
            if args:
                args.pop(list(args)[-1])
                return changed
    return changed


VARIANTS: dict[str, Callable[[Answer], Answer]] = {
    "ground truth": lambda answer: answer,
    "integers as floats": lambda answer: _map_values(answer, _int_as_float),
    "integral floats as integers": lambda answer: _map_values(answer, _float_as_int),
    "a string changed": _string_changed,
    "last argument left out": _last_argument_dropped,
    "first call repeated": lambda answer: [*answer, answer[0]],
}


def _sample(category: str) -> list[tuple[dict[str, Any], dict[str, Any], Case]]:
    """A seeded sample of the category's entries that import: BFCL's entry and answer, our case."""
    from xpeval.evals.cases.bfcl import BfclConversionError, convert_entry
    from xpeval.evals.cases.bfcl_data import bfcl_data_dir, category_files, read_jsonl

    entries_file: Path = category_files(bfcl_data_dir())[category]
    answers = {
        str(row["id"]): row for row in read_jsonl(entries_file.parent / "possible_answer" / entries_file.name)
    }
    entries = read_jsonl(entries_file)
    random.Random(f"xpeval-ast-{category}").shuffle(entries)
    chosen: list[tuple[dict[str, Any], dict[str, Any], Case]] = []
    for entry in entries:
        answer = answers[str(entry["id"])]
        try:
            chosen.append((entry, answer, convert_entry(entry, answer, category)))
        except BfclConversionError:
            continue
        if len(chosen) == SAMPLE:
            break
    return chosen


def _xpeval_correct(case: Case, answer: Answer) -> bool:
    from xpeval.evals.verdict.scoring import score

    calls = [{"name": name, "arguments": args} for call in answer for name, args in call.items()]
    return score(case, calls).correct


@pytest.mark.parametrize("category", CATEGORIES)
def test_single_turn_verdicts_equal_bfcls_ast_checker(category: str) -> None:
    from bfcl_eval.constants.enums import Language

    ast_checker = _bfcl_ast_checker()
    compared, disagreements = 0, []
    for entry, possible, case in _sample(category):
        truth = _ground_truth(possible["ground_truth"])
        for variant, make in VARIANTS.items():
            answer = make(truth)
            reference = ast_checker(
                entry["function"], answer, possible["ground_truth"], Language.PYTHON, category, "model"
            )["valid"]
            ours = _xpeval_correct(case, answer)
            compared += 1
            if ours != reference:
                disagreements.append(f"{entry['id']} [{variant}]: BFCL {reference}, xpeval {ours}")
    assert compared >= SAMPLE * len(VARIANTS) // 2, f"only {compared} answers compared in {category}"
    assert not disagreements, f"{len(disagreements)} of {compared} disagree: " + "; ".join(disagreements[:8])
