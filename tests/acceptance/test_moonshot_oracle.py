"""The checker's Moonshot rules against Moonshot's own validator (walle, at `lite`).

Every case of walle's suite (as a schema, and wrapped as Kimi's vendor verifier sends it) and
every schema of ../shared/corpus/schemas: the checker accepts exactly what walle-lite accepts. The
one stricter reading the checker keeps has a real error body (docs/provider-schema-rules.md §8).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests._walle import cases, corpus_schemas, require_oracle, walle_lite, wrapped
from xpeval.adapters.schema import PassResult, apply_dialect
from xpeval.adapters.schema._mfjs_fit import UNSUPPORTED, UNSUPPORTED_SCHEMAS
from xpeval.evals.acceptance.checker import build_definition, check

STRICTER = {"moonshot.root-type-object"}
"""Refused by the API before walle runs ("tools.function.parameters.type is required and must be
"object"", a direct test against api.moonshot.cn): docs/provider-schema-rules.md §8."""

pytestmark = pytest.mark.corpus


def _schemas() -> list[tuple[str, Any]]:
    require_oracle()
    every = [(f"case {label}", schema) for label, schema in cases()]
    every += [(f"wrapped {label}", wrapped(schema)) for label, schema in cases()]
    every += [(f"corpus {label}", schema) for label, schema in corpus_schemas()]
    return every


def _disagreements() -> tuple[list[tuple[str, str, list[str]]], int]:
    judge = walle_lite()
    found: list[tuple[str, str, list[str]]] = []
    stricter = 0
    for label, schema in _schemas():
        walle = judge(schema)
        rules = sorted({v.rule for v in check("moonshot", build_definition("moonshot", "t", "", schema))})
        if walle is None and rules and set(rules) <= STRICTER:
            stricter += 1
        elif (walle is None) != (not rules):
            found.append((label, walle or "accepted", rules))
    return found, stricter


@pytest.mark.slow
def test_the_checker_accepts_what_walle_lite_accepts_and_nothing_else() -> None:
    found, _ = _disagreements()
    assert found == []


@pytest.mark.slow
def test_the_only_stricter_reading_is_the_root_type_and_it_is_counted() -> None:
    _, stricter = _disagreements()
    # the suite's own root-level cases (a root of another type, an untyped root) and three corpus
    # tools with an untyped root: what the moonshot pass always rewrites (`type: object`)
    assert 0 < stricter < 200


def test_the_suite_is_all_there() -> None:
    labels = [label for label, _ in _schemas()]
    assert len({label.split()[1].split("/")[0] for label in labels if label.startswith("case")}) == 16
    assert len(labels) > 500


def _sent() -> list[tuple[str, Any, PassResult]]:
    return [(label, schema, apply_dialect("moonshot", schema)) for label, schema in _schemas()]


def test_the_moonshot_pass_never_sends_what_walle_lite_refuses() -> None:
    judge = walle_lite()
    refused = [
        (label, judge(r.schema_)) for label, _, r in _sent() if r.schema_ is not None and judge(r.schema_)
    ]
    assert refused == []


def _keywords_in(schema: Any) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found |= set(node)
            for key in ("properties", "$defs"):
                if isinstance(node.get(key), dict):
                    stack.extend(node[key].values())
            stack.extend(node.get(k) for k in ("items", "additionalProperties"))
            stack.extend(node.get("anyOf") or [])
    return found


def test_no_keyword_moonshot_does_not_honour_is_sent_without_a_loss() -> None:
    unsupported = set(UNSUPPORTED) | set(UNSUPPORTED_SCHEMAS) | {"oneOf", "allOf", "prefixItems"}
    silent = []
    for label, _, result in _sent():
        if result.schema_ is None:
            continue
        reported = {loss.keyword for loss in result.losses}
        silent += [(label, k) for k in sorted((_keywords_in(result.schema_) & unsupported) - reported)]
    assert silent == []
