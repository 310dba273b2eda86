"""xpeval's definitions where the K2 Vendor Verifier's were never written down (docs/reference-runs.md,
"Two definitions"): `arguments: ""` is no JSON object (a parse error, so the call is not valid),
and a request that failed did not trigger, on either side (`verifier_counts`). With them, the
verifier's published K2-0905 figures come out exactly from episodes with those counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests._cli import Cli
from xpeval.evals.results.answers import Answer
from xpeval.evals.verdict.reference import compare_rows, verifier_counts

CALL = {"name": "get_weather", "arguments": {"city": "Oslo"}, "parse_error": None}
EMPTY = {"name": "get_weather", "arguments": {}, "parse_error": "arguments are empty"}
CALLED = Answer(calls=((CALL,),), schema_valid=True)
CALLED_EMPTY = Answer(calls=((EMPTY,),), schema_valid=False)
INVALID = Answer(calls=((CALL,),), schema_valid=False)
NO_CALL = Answer(calls=((),))
FAILED = Answer(error=True)


def _interaction(body: str, content_type: str) -> dict[str, object]:
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": json.dumps({"model": "m", "messages": [], "stream": "event-stream" in content_type}),
            "headers": {},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": [content_type]},
            "body": {"string": body},
        },
    }


def test_empty_argument_text_is_a_parse_error_plain_and_streamed(cli: Cli, tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    plain = {
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
    }  # fmt: skip
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    frames = [
        {
            **chunk,
            "choices": [{"index": 0, "delta": {"tool_calls": [{**call, "index": 0}]}, "finish_reason": None}],
        },
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    stream = "".join(f"data: {json.dumps(frame)}\n\n" for frame in frames) + "data: [DONE]\n\n"
    cassette = tmp_path / "c.yaml"
    cassette.write_text(
        yaml.safe_dump(
            {
                "interactions": [
                    _interaction(json.dumps(plain), "application/json"),
                    _interaction(stream, "text/event-stream"),
                ],
                "version": 1,
            }
        )
    )
    done = cli("decode", "--json", str(cassette))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 2
    for row in rows:
        [decoded] = row["tool_calls"]
        assert decoded["raw_arguments"] == "" and decoded["arguments"] == {}
        assert decoded["parse_error"].startswith("arguments are empty: not a JSON object")


def _episodes(**groups: tuple[int, Answer, Answer]) -> tuple[dict[str, Answer], dict[str, Answer]]:
    """(row, reference) from groups of `count` episodes answered (row answer, reference answer)."""
    row: dict[str, Answer] = {}
    reference: dict[str, Answer] = {}
    for name, (count, mine, theirs) in groups.items():
        for index in range(count):
            row[f"{name}_{index}"], reference[f"{name}_{index}"] = mine, theirs
    return row, reference


def _published(counts_tool_calls: int, successful: int, accuracy: str, f1: str | None) -> tuple[object, ...]:
    return (counts_tool_calls, successful, accuracy, f1)


def _as_printed(row: dict[str, Answer], reference: dict[str, Answer], with_f1: bool) -> tuple[object, ...]:
    counts = verifier_counts(row, reference)
    return (
        counts.tool_calls,
        counts.successful,
        f"{counts.schema_accuracy:.2%}",
        f"{counts.f1:.2%}" if with_f1 else None,
    )


# The verifier's README, "K2 0905 Evaluation Results" (test time 2025-11-15): the official API's
# row (1274 tool_calls responses, all valid) and the rows below, in its columns
# count_finish_reason_tool_calls, count_successful_tool_call, schema_accuracy and, where it
# prints one, tool_call_f1 (ToolCall-Trigger Similarity) against the official API.
REFERENCE_TRIGGERED = 1274


@pytest.mark.parametrize(
    ("vendor", "groups", "published"),
    [
        (  # Groq: 1042 tool_calls responses, all valid, F1 69.52 %: TP 805 of the reference's 1274
            "groq",
            {
                "tp": (804, CALLED, CALLED),
                "tp_empty_reference_args": (1, CALLED, CALLED_EMPTY),
                "fp": (236, CALLED, NO_CALL),
                "fp_failed_reference": (1, CALLED, FAILED),
                "fn": (469, NO_CALL, CALLED),
                "tn": (489, NO_CALL, NO_CALL),
            },
            _published(1042, 1042, "100.00%", "69.52%"),
        ),
        (  # Chutes: 1271 tool_calls responses, 1229 valid (96.70 %)
            "chutes",
            {
                "valid": (1228, CALLED, CALLED),
                "valid_reference_failed": (1, CALLED, FAILED),
                "invalid": (40, INVALID, CALLED),
                "empty_arguments": (2, CALLED_EMPTY, CALLED),
                "no_call": (729, NO_CALL, NO_CALL),
            },
            _published(1271, 1229, "96.70%", None),
        ),
        (  # vLLM: 1325 tool_calls responses, 1007 valid (76.00 %)
            "vllm",
            {
                "valid": (1007, CALLED, CALLED),
                "invalid": (317, INVALID, CALLED),
                "empty_arguments": (1, CALLED_EMPTY, CALLED),
                "failed": (3, FAILED, CALLED),
            },
            _published(1325, 1007, "76.00%", None),
        ),
    ],
)
def test_the_verifiers_published_figures_come_out_exactly_with_the_two_definitions(
    vendor: str, groups: dict[str, tuple[int, Answer, Answer]], published: tuple[object, ...]
) -> None:
    row, reference = _episodes(**groups)
    assert _as_printed(row, reference, with_f1=published[3] is not None) == published, vendor


def test_the_reference_row_of_the_published_table() -> None:
    row, reference = _episodes(
        called=(REFERENCE_TRIGGERED, CALLED, CALLED),
        no_call=(700, NO_CALL, NO_CALL),
        failed=(26, FAILED, FAILED),
    )
    assert _as_printed(reference, row, with_f1=False) == (1274, 1274, "100.00%", None)


def test_xpevals_own_verdict_leaves_the_failed_reference_out_where_the_verifier_counts_it() -> None:
    """The Groq row above without the definition: `compare_rows` drops the pair whose reference
    failed (it is no evidence of what the model does there) and prints 69.55 %, not 69.52 %."""
    row, reference = _episodes(
        tp=(805, CALLED, CALLED),
        fp=(236, CALLED, NO_CALL),
        fp_failed_reference=(1, CALLED, FAILED),
        fn=(469, NO_CALL, CALLED),
        tn=(489, NO_CALL, NO_CALL),
    )
    ours = compare_rows("groq", row, "official", reference, cases={})
    theirs = verifier_counts(row, reference)
    assert (ours.fp, ours.reference_errors, f"{ours.f1:.2%}") == (236, 1, "69.55%")
    assert (theirs.fp, f"{theirs.f1:.2%}") == (237, "69.52%")


def test_an_empty_argument_call_is_not_a_successful_tool_call() -> None:
    row, reference = _episodes(empty=(1, CALLED_EMPTY, CALLED), valid=(3, CALLED, CALLED))
    counts = verifier_counts(row, reference)
    assert (counts.tool_calls, counts.successful, counts.tp) == (4, 3, 4)


def test_compare_prints_the_verifiers_columns_counting_a_failed_reference_request_as_no_call(
    tmp_path: Path, cli: Cli
) -> None:
    from tests.vendors._vendors import perfect, run_vendors
    from xpeval.adapters.contract import ProviderError, TurnResult
    from xpeval.evals.cases import Case, load_cases

    cases = [c.case for c in load_cases() if c.case.category in ("simple", "irrelevance")]
    calling = [c.id for c in cases if c.category == "simple"]
    failing = calling[0]

    def reference(case: Case) -> TurnResult:
        if case.id == failing:  # the official API failed this request
            return TurnResult(error=ProviderError(status=500, message="upstream error"))
        return perfect(case)

    results = run_vendors(
        tmp_path / "results.jsonl", cases, {"openai-compatible": reference, "moonshot": perfect}
    )
    done = cli(
        "compare", str(results), "--reference", "openai-compatible=qwen2.5-coder-1.5b-instruct",
        "--out", str(tmp_path / "out"), "--verifier",
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    n, tn = len(calling), len(cases) - len(calling)
    assert (
        f"| local-model|openai-compatible|qwen2.5-coder-1.5b-instruct | {n - 1} | {n - 1} | 100.00% "
        f"| {n - 1}/0/0/{tn + 1} | - |"
    ) in done.stdout
    # the vendor called where the reference failed: the verifier's FP, which xpeval's own table leaves out
    f1 = 2 * (n - 1) / (2 * (n - 1) + 1)
    assert (
        f"| local-model|moonshot|qwen2.5-coder-1.5b-instruct | {n} | {n} | 100.00% "
        f"| {n - 1}/1/0/{tn} | {f1:.2%} |"
    ) in done.stdout, done.stdout
