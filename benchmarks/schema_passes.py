"""Dialect passes over the real corpus, side by side with pydantic-ai's transformers.

For every dialect: the median time per schema (each schema timed as the best of a few runs,
then the median over the corpus), the same for pydantic-ai's equivalent transformer in the same
run, their ratio, and how many schemas each rewrite drops a constraint from *without saying so*.

A constraint "disappears" when an assertion of the input (any node, `$defs` included) is absent
from the output: bounds, `pattern`, `format`, `enum` values, `const`, `multipleOf`,
`uniqueItems`, `additionalProperties: false` compared by value; `oneOf`, `not`, `if`,
`propertyNames`, `patternProperties`, `dependentRequired`, `dependentSchemas`, `contains`,
`prefixItems` by name. It is silent unless the pass reported a loss (or an exact rename) for that
keyword. pydantic-ai reports nothing, so every disappearance there is silent (even when it
appended the constraint to a description). Schemas either side refuses are not counted.

Also: a 20,000-deep schema and a 40-level reference bomb through every dialect (seconds).

Target: no schema in any dialect loses a constraint silently (exit 1 otherwise); the times are
reported beside the peer's, measured in the same run.

Usage: python benchmarks/schema_passes.py [--corpus DIR] [--repeat N]
Needs the `bench` extra (pydantic-ai-slim).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from xpeval.adapters.schema import DIALECTS, PassResult, apply_dialect, safe_json
from xpeval.adapters.schema.assertions import dropped_constraints

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "schemas"


def _pydantic_ai() -> dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]]:
    from pydantic_ai.profiles.google import GoogleJsonSchemaTransformer, GoogleOpenAPISchemaTransformer
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer
    from pydantic_ai.providers.anthropic import AnthropicJsonSchemaTransformer

    def run(cls: Any, **kw: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda schema: cls(schema, **kw).walk()

    return {
        "openai": ("OpenAIJsonSchemaTransformer", run(OpenAIJsonSchemaTransformer)),
        "openai-strict": (
            "OpenAIJsonSchemaTransformer(strict)",
            run(OpenAIJsonSchemaTransformer, strict=True),
        ),
        "anthropic": ("AnthropicJsonSchemaTransformer", run(AnthropicJsonSchemaTransformer)),
        "anthropic-strict": (
            "AnthropicJsonSchemaTransformer(strict)",
            run(AnthropicJsonSchemaTransformer, strict=True),
        ),
        "gemini-openapi": ("GoogleOpenAPISchemaTransformer", run(GoogleOpenAPISchemaTransformer)),
        "gemini-json-schema": ("GoogleJsonSchemaTransformer", run(GoogleJsonSchemaTransformer)),
        "moonshot": ("OpenAIJsonSchemaTransformer (its Moonshot path)", run(OpenAIJsonSchemaTransformer)),
    }


def _best_time(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _ours_silent(schema: Any, result: PassResult) -> int:
    if result.schema_ is None:
        return 0
    reported = {loss.keyword for loss in result.losses}
    return len(dropped_constraints(schema, result.schema_) - reported)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    files = sorted(args.corpus.glob("*/*.json"))
    if not files:
        print(f"no schemas under {args.corpus}", file=sys.stderr)
        return 2
    schemas = [safe_json.load_path(path)["parameters"] for path in files]
    peers = _pydantic_ai()
    warnings.simplefilter("ignore")
    header = (
        f"{'dialect':<19} {'ours µs':>8} {'peer µs':>8} {'ratio':>6} {'ours silent':>12} {'peer silent':>12} "
        f"{'reported':>9} {'refused':>8} {'peer err':>8}  peer"
    )
    print(f"{len(schemas)} schemas from {args.corpus}; median of per-schema best-of-{args.repeat} times")
    print(header)
    print("-" * len(header))
    silent_total = 0
    for dialect in DIALECTS:  # warm-up: imports, caches, CPU frequency
        for schema in schemas:
            apply_dialect(dialect, schema)
    for dialect in DIALECTS:
        label, peer = peers[dialect]
        ours_t, peer_t = [], []
        ours_silent = peer_silent = reported = refused = peer_errors = 0
        for schema in schemas:
            result = apply_dialect(dialect, schema)
            ours_t.append(_best_time(partial(apply_dialect, dialect, schema), args.repeat))
            try:
                peer_out = peer(schema)
                peer_t.append(_best_time(partial(peer, schema), args.repeat))
            except Exception:
                peer_out = None
                peer_errors += 1
            if result.refusal is not None:
                refused += 1
                continue
            if any(not loss.exact for loss in result.losses):
                reported += 1
            if _ours_silent(schema, result):
                ours_silent += 1
            if peer_out is not None and dropped_constraints(schema, peer_out):
                peer_silent += 1
        silent_total += ours_silent
        ours_us = statistics.median(ours_t) * 1e6
        peer_us = statistics.median(peer_t) * 1e6 if peer_t else float("nan")
        print(
            f"{dialect:<19} {ours_us:>8.1f} {peer_us:>8.1f} {ours_us / peer_us:>6.2f} {ours_silent:>12} "
            f"{peer_silent:>12} {reported:>9} {refused:>8} {peer_errors:>8}  {label}"
        )
    print("\nours/peer silent: schemas (not refused) losing a constraint with no loss reported;")
    print("reported: schemas whose rewrite lists a weakening loss; refused: schemas we refuse with a reason.")
    _hostile()
    print(
        "target met (no silent loss)" if silent_total == 0 else f"TARGET MISSED: {silent_total} silent losses"
    )
    return 0 if silent_total == 0 else 1


def _hostile() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(20_000):
        deep = {"type": "object", "properties": {"a": deep}}
    defs: dict[str, Any] = {"D0": {"type": "string"}}
    for i in range(1, 41):
        ref = f"#/$defs/D{i - 1}"
        defs[f"D{i}"] = {
            "type": "object",
            "properties": {"l": {"$ref": ref}, "r": {"$ref": ref, "description": "x"}},
        }
    bomb = {"type": "object", "properties": {"top": {"$ref": "#/$defs/D40"}}, "$defs": defs}
    print("\nhostile schemas, seconds per dialect (closed by a budget or refused):")
    for name, schema in (("20,000-deep", deep), ("ref bomb x40", bomb)):
        cells = []
        for dialect in DIALECTS:
            start = time.perf_counter()
            result = apply_dialect(dialect, schema)
            elapsed = time.perf_counter() - start
            outcome = "refused" if result.refusal else "closed" if result.losses else "kept"
            cells.append(f"{dialect}={elapsed:.3f}s/{outcome}")
        print(f"  {name}: " + ", ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
