"""BFCL's multi-turn entries for the tests: the imported cases, a bounded sample of them, answer
variants, and bfcl-eval's own `multi_turn_checker` as the reference verdict.

The installed bfcl-eval is optional: tests using this module skip, saying how to install it,
where it (or mpmath, which its MathAPI imports) is absent. By default they take a seeded sample
per category (CI's budget); `XPEVAL_BFCL_FULL=1` takes every imported entry (`nox -s bfcl_state`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import random
from collections.abc import Callable
from typing import Any

import pytest

from xpeval.evals.cases.bfcl_multi_turn import MULTI_TURN_CATEGORIES
from xpeval.evals.cases.model import Case

FULL = os.environ.get("XPEVAL_BFCL_FULL") == "1"
SAMPLE_PER_CATEGORY = 13
"""CI's sample for the verdict's parity: 13 of each category's entries (52 in all, at least 50)."""
LOOP_SAMPLE_PER_CATEGORY = 4
"""CI's sample played through the runner (record and replay: about half a second an episode)."""

needs_bfcl_environment = pytest.mark.skipif(
    importlib.util.find_spec("bfcl_eval") is None or importlib.util.find_spec("mpmath") is None,
    reason="bfcl-eval (and mpmath) are not installed: pip install --no-deps bfcl-eval==2026.3.23 mpmath",
)

Calls = list[list[dict[str, Any]]]
"""An answer: per turn, the calls (`name`, `arguments`)."""


@functools.cache
def imported(category: str) -> tuple[Case, ...]:
    """Every entry of a BFCL multi-turn category that imports, as cases."""
    from xpeval.evals.cases.bfcl_data import bfcl_data_dir, convert_category

    return tuple(o.case for o in convert_category(bfcl_data_dir(), category) if o.case is not None)


def chosen(category: str, size: int = SAMPLE_PER_CATEGORY) -> list[Case]:
    """The cases a test run plays: all under XPEVAL_BFCL_FULL=1, else a seeded sample of `size`
    (a smaller size takes the first ones of the same sample)."""
    cases = list(imported(category))
    return cases if FULL else random.Random(f"xpeval-{category}").sample(cases, SAMPLE_PER_CATEGORY)[:size]


def chosen_ids() -> list[tuple[str, str]]:
    """(category, case id) for parametrizing, without importing anything when bfcl is absent."""
    if importlib.util.find_spec("bfcl_eval") is None or importlib.util.find_spec("mpmath") is None:
        return []
    return [(category, case.id) for category in MULTI_TURN_CATEGORIES for case in chosen(category)]


def case_by_id(category: str, case_id: str) -> Case:
    return next(case for case in imported(category) if case.id == case_id)


def ground_truth(case: Case) -> Calls:
    return [
        [{"name": c.name, "arguments": dict(c.arguments)} for c in (turn.expected.ground_truth or [])]
        if turn.expected is not None
        else []
        for turn in case.turns
    ]


def _last_turn_with_calls(answer: Calls) -> int | None:
    return next((i for i in range(len(answer) - 1, -1, -1) if answer[i]), None)


def last_call_dropped(answer: Calls) -> Calls | None:
    last = _last_turn_with_calls(answer)
    if last is None:
        return None
    return [turn[:-1] if i == last else turn for i, turn in enumerate(answer)]


def turn_reversed(answer: Calls) -> Calls | None:
    """The calls of the first turn with two or more different calls, in reverse order."""
    index = next((i for i, turn in enumerate(answer) if len(turn) > 1 and turn != turn[::-1]), None)
    if index is None:
        return None
    return [turn[::-1] if i == index else turn for i, turn in enumerate(answer)]


def extra_pwd(answer: Calls, case: Case) -> Calls | None:
    """`pwd()` (GorillaFileSystem, read-only) after every turn's calls."""
    if case.environment is None or "GorillaFileSystem" not in case.environment.classes:
        return None
    return [[*turn, {"name": "pwd", "arguments": {}}] if turn else turn for turn in answer]


def last_call_repeated(answer: Calls) -> Calls | None:
    last = _last_turn_with_calls(answer)
    if last is None:
        return None
    return [[*turn, turn[-1]] if i == last else turn for i, turn in enumerate(answer)]


VARIANTS: dict[str, Callable[[Calls, Case], Calls | None]] = {
    "ground_truth": lambda answer, case: answer,
    "last_call_dropped": lambda answer, case: last_call_dropped(answer),
    "turn_reversed": lambda answer, case: turn_reversed(answer),
    "extra_pwd": extra_pwd,
    "last_call_repeated": lambda answer, case: last_call_repeated(answer),
}


@functools.cache
def bfcl_answers(category: str) -> dict[str, list[list[str]]]:
    """BFCL's possible answers of a category by entry id, as its file holds them."""
    from xpeval.evals.cases.bfcl_data import bfcl_data_dir, category_files, read_jsonl

    path = category_files(bfcl_data_dir())[category]
    return {
        str(row["id"]): row["ground_truth"] for row in read_jsonl(path.parent / "possible_answer" / path.name)
    }


def call_source(call: dict[str, Any]) -> str:
    """A call as the Python source BFCL's function-calling handlers decode it to."""
    arguments = ",".join(f"{key}={value!r}" for key, value in call["arguments"].items())
    return f"{call['name']}({arguments})"


_runs = 0


def bfcl_verdict(case: Case, answer: Calls) -> bool:
    """bfcl-eval's `multi_turn_checker` on `answer` (one decoded step per turn that has calls)."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    global _runs
    _runs += 1
    model_name = f"xpeval_parity_{os.getpid()}_{_runs}"  # BFCL keeps instances in its module globals by name
    environment = case.environment
    assert environment is not None
    entry_id = case.origin.removeprefix("bfcl:")
    entry = {
        "id": entry_id,
        "initial_config": environment.initial_state,
        "involved_classes": list(environment.classes),
    }
    decoded = [[[call_source(call) for call in turn]] if turn else [] for turn in answer]
    truth = bfcl_answers(entry_id.rsplit("_", 1)[0])[entry_id]  # BFCL's own source, as in its file
    try:
        return bool(
            multi_turn_checker(decoded, truth, entry, entry_id.rsplit("_", 1)[0], model_name)["valid"]
        )
    finally:
        for key in [k for k in vars(multi_turn_utils) if k.startswith(model_name)]:
            del vars(multi_turn_utils)[key]
