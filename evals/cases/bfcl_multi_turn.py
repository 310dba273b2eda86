"""BFCL multi-turn entries -> environment cases (pure conversion; `bfcl_data` reads the files).

An entry becomes a `multi_turn` case whose `environment` is BFCL's API classes (`involved_classes`,
loaded with `initial_config`) and whose turns carry BFCL's ground truth to execute, as bfcl-eval
2026.3.23 prepares and judges it:

- the tools are the function documents of the involved classes (`multi_turn_func_doc/`), in
  class order, converted like the single-turn tools (`bfcl.convert_function`);
- `missed_function` (multi_turn_miss_func): each held-out function is taken out of the first
  turn's tools and added at its turn, whose empty question becomes BFCL's own user message for it
  (`DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC`);
- `excluded_function` is not read (bfcl-eval never reads it: those tools are offered);
- each ground-truth call is Python call source (`cd(folder='x')`, `sort('a.txt')`): it is read
  with `ast` (literals only) and its positional arguments named by the method's signature, as
  BFCL's `eval` would bind them;
- `long_context` entries load their scenario with BFCL's long-context padding.

An entry that cannot be carried exactly is refused with the reason (`BfclConversionError`).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from xpeval.evals.cases.bfcl import BfclConversionError, convert_function
from xpeval.evals.cases.environment import BFCL_CLASSES
from xpeval.evals.cases.loader import describe_validation_error
from xpeval.evals.cases.model import Case

MULTI_TURN_CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)

ParameterNames = Callable[[str, str], Sequence[str]]
"""(class name, method name) -> the method's parameter names in order (positional binding)."""


def parse_call(source: str, parameters: Callable[[str], Sequence[str]]) -> dict[str, Any]:
    """One ground-truth call's source as `{name, arguments}` (literal values only)."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError as exc:
        raise BfclConversionError(f"ground-truth call {source!r} is not Python: {exc.msg}") from exc
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise BfclConversionError(f"ground-truth call {source!r} is not a call of a function name")
    name = node.func.id
    try:
        positional = [ast.literal_eval(arg) for arg in node.args]
        named = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
    except ValueError as exc:
        raise BfclConversionError(f"ground-truth call {source!r}: an argument is not a literal") from exc
    if len(named) != len(node.keywords):
        raise BfclConversionError(f"ground-truth call {source!r}: ** arguments")
    if positional:
        names = list(parameters(name))
        if len(positional) > len(names):
            raise BfclConversionError(
                f"ground-truth call {source!r}: more positional arguments than parameters"
            )
        for key, value in zip(names, positional, strict=False):
            if key in named:
                raise BfclConversionError(f"ground-truth call {source!r}: {key!r} given twice")
            named[key] = value
    return {"name": name, "arguments": named}


def convert_multi_turn_entry(
    entry: Mapping[str, Any],
    answer: Mapping[str, Any] | None,
    bfcl_category: str,
    function_docs: Mapping[str, list[dict[str, Any]]],
    parameter_names: ParameterNames,
    held_out_prompt: str,
) -> Case:
    """One multi-turn entry as an environment case (see the module docstring)."""
    entry_id = str(entry.get("id", ""))
    question, classes, truth = _checked_entry(entry_id, entry, answer)
    functions = [copy.deepcopy(doc) for name in classes for doc in function_docs.get(name, [])]
    added = _hold_out(entry_id, functions, entry.get("missed_function") or {})
    owners = {doc["name"]: name for name in classes for doc in function_docs.get(name, [])}

    def parameters_of(method: str) -> Sequence[str]:
        owner = owners.get(method)
        if owner is None:
            raise BfclConversionError(f"{entry_id}: ground truth calls {method!r}: no involved class has it")
        return parameter_names(owner, method)

    turns = []
    for index, messages in enumerate(question):
        if index in added and not messages:
            messages = [{"role": "user", "content": held_out_prompt}]
        try:
            calls = [parse_call(source, parameters_of) for source in truth[index]]
        except BfclConversionError as exc:
            raise BfclConversionError(f"{entry_id}: turn {index}: {exc}") from exc
        turns.append((copy.deepcopy(messages), calls, [convert_function(f) for f in added.get(index, [])]))
    raw: dict[str, Any] = {
        "id": f"bfcl_{entry_id}",
        "category": "multi_turn",
        "tools": [convert_function(f) for f in functions],
        "messages": turns[0][0],
        "expected": {"ground_truth": turns[0][1]},
        "follow_ups": [
            {"messages": messages, "expected": {"ground_truth": calls}, "added_tools": tools}
            for messages, calls, tools in turns[1:]
        ],
        "environment": {
            "kind": "bfcl",
            "classes": list(classes),
            "initial_state": copy.deepcopy(entry.get("initial_config") or {}),
            "long_context": "long_context" in bfcl_category,
        },
        "origin": f"bfcl:{entry_id}",
    }
    try:
        return Case.model_validate(raw)
    except ValidationError as exc:
        raise BfclConversionError(f"{entry_id}: {describe_validation_error(exc)}") from exc


def _checked_entry(
    entry_id: str, entry: Mapping[str, Any], answer: Mapping[str, Any] | None
) -> tuple[list[list[Any]], list[str], list[list[str]]]:
    """The entry's turns, involved classes and ground truth, or why the entry cannot be read."""
    question = entry.get("question")
    classes = entry.get("involved_classes")
    if not isinstance(question, list) or not all(isinstance(turn, list) for turn in question):
        raise BfclConversionError(f"{entry_id}: question is not a list of turns")
    if not isinstance(classes, list) or not classes or any(c not in BFCL_CLASSES for c in classes):
        raise BfclConversionError(f"{entry_id}: involved_classes {classes!r} are not BFCL's API classes")
    if answer is None or not isinstance(answer.get("ground_truth"), list):
        raise BfclConversionError(f"{entry_id}: no possible answer")
    truth = answer["ground_truth"]
    if len(truth) != len(question):
        raise BfclConversionError(f"{entry_id}: {len(question)} turns but a ground truth for {len(truth)}")
    return question, classes, truth


def _hold_out(
    entry_id: str, functions: list[dict[str, Any]], missed: Mapping[str, Any]
) -> dict[int, list[dict[str, Any]]]:
    """Take each held-out function out of `functions` (the first of its name, as BFCL does) and
    return them by the turn that adds them."""
    added: dict[int, list[dict[str, Any]]] = {}
    for turn, names in missed.items():
        if not str(turn).isdigit() or not isinstance(names, list):
            raise BfclConversionError(
                f"{entry_id}: missed_function {turn!r}: {names!r} is not a turn's names"
            )
        for name in names:
            index = next((i for i, doc in enumerate(functions) if doc.get("name") == name), None)
            if index is None:
                raise BfclConversionError(
                    f"{entry_id}: held-out function {name!r} is not a tool of the entry"
                )
            added.setdefault(int(turn), []).append(functions.pop(index))
    return added


__all__ = ["MULTI_TURN_CATEGORIES", "ParameterNames", "convert_multi_turn_entry", "parse_call"]
