"""The checker's Moonshot rules against Moonshot's own validator (walle, at `strict`, the level
walle's README names as what Moonshot's server requires).

Every case of walle's suite (as a schema, and wrapped as Kimi's vendor verifier sends it) and
every schema of ../shared/corpus/schemas: the checker accepts exactly what walle-strict accepts. The
one stricter reading the checker keeps has a real error body (docs/provider-schema-rules.md §8).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._walle import cases, corpus_schemas, require_oracle, walle_strict, wrapped
from xpeval.adapters.schema import PassResult, apply_dialect
from xpeval.adapters.schema._mfjs_fit import UNSUPPORTED, UNSUPPORTED_SCHEMAS
from xpeval.evals.acceptance.checker import build_definition, check

STRICTER = {"moonshot.root-type-object"}
"""Refused by the API before walle runs ("tools.function.parameters.type is required and must be
"object"", a direct test against api.moonshot.cn): docs/provider-schema-rules.md §8."""

ROOT_REFUSALS = {"schema.root-not-object", "schema.root-union"}
"""The pass's refusals of a root it cannot send as `type: object` (the same reading as STRICTER)."""

pytestmark = pytest.mark.corpus


def _schemas() -> list[tuple[str, Any]]:
    require_oracle()
    every = [(f"case {label}", schema) for label, schema in cases()]
    every += [(f"wrapped {label}", wrapped(schema)) for label, schema in cases()]
    every += [(f"corpus {label}", schema) for label, schema in corpus_schemas()]
    return every


def _disagreements() -> tuple[list[tuple[str, str, list[str]]], int]:
    judge = walle_strict()
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
def test_the_checker_accepts_what_walle_strict_accepts_and_nothing_else() -> None:
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


def test_the_moonshot_pass_never_sends_what_walle_strict_refuses() -> None:
    judge = walle_strict()
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
    # `discriminator` (OpenAPI) and `optional` pass walle-strict and are refused at `ultra`: MFJS
    # does not have them, so the model is told, never the validator (named here, not only in the pass)
    unsupported = set(UNSUPPORTED) | set(UNSUPPORTED_SCHEMAS) | {"oneOf", "allOf", "prefixItems"}
    unsupported |= {"discriminator", "optional"}
    silent = []
    for label, _, result in _sent():
        if result.schema_ is None:
            continue
        reported = {loss.keyword for loss in result.losses}
        silent += [(label, k) for k in sorted((_keywords_in(result.schema_) & unsupported) - reported)]
    assert silent == []


def test_xpeval_schemas_sends_moonshot_nothing_walle_strict_refuses(tmp_path: Path) -> None:
    """Through the command a user runs: every tool of walle's suite (as a schema and wrapped as
    Kimi's vendor verifier sends it) and of the corpus, judged for the `moonshot` adapter; what
    `xpeval schemas` says it would send, walle-strict accepts, and each tool it refuses walle
    refuses too, unless the refusal is the root rule (`ROOT_REFUSALS`)."""
    judge = walle_strict()
    tools: list[dict[str, Any]] = [
        {"name": f"t{i}", "description": label, "parameters": schema}
        for i, (label, schema) in enumerate(_schemas())
        if isinstance(schema, dict)
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "xpeval", "schemas", "--tools", "tools.json", "--adapters", "moonshot"),
            *("--json", "--no-fidelity", "--workers", "1", "--reports", "reports"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {row["tool"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert len(rows) == len(tools)
    sent_refused: list[tuple[str, str]] = []
    refused_accepted: list[tuple[str, str]] = []
    for tool in tools:
        row = rows[tool["name"]]
        if row["rewritten"] is not None:
            walle = judge(row["rewritten"]["function"]["parameters"])
            if walle is not None:
                sent_refused.append((tool["description"], walle))
        elif judge(tool["parameters"]) is None:
            refused_accepted.append((tool["description"], row["refusal_rule"]))
    assert sent_refused == []
    # the one stricter reading: a root that is no object (walle's own root-level cases), refused
    # by the API before walle runs; nothing else walle accepts is refused
    assert {rule for _, rule in refused_accepted} <= ROOT_REFUSALS
    assert all(label.startswith("case ") for label, _ in refused_accepted), refused_accepted
