"""A row keeps at most a fixed number of bytes per argument value, text and message; the rest
is replaced by its length and sha256, and the row says what it cut."""

from __future__ import annotations

import hashlib
import json

from tests.gate._rows import row
from xpeval.evals.results.rows import MAX_CALL_BYTES, MAX_VALUE_BYTES, CallRecord, bounded

BIG = "é" + "x" * (5 * 1024 * 1024)


def test_a_5_mb_argument_is_cut_with_its_length_and_hash() -> None:
    big = row("c1", True).model_copy(
        update={
            "calls": [CallRecord(turn=0, id="1", name="save", arguments={"payload": BIG, "small": "ok"})],
            "text": BIG,
            "error_message": BIG,
            "reason": "fine",
        }
    )
    cut = bounded(big)
    payload = cut.calls[0].arguments["payload"]
    digest = hashlib.sha256(BIG.encode()).hexdigest()
    assert len(payload.encode()) < MAX_VALUE_BYTES + 200 and digest in payload
    assert f"{len(BIG.encode())} bytes" in payload
    assert cut.calls[0].arguments["small"] == "ok" and cut.reason == "fine"
    assert {t.field for t in cut.truncated} == {"calls[0].arguments.payload", "text", "error_message"}
    assert all(t.sha256 == digest and t.bytes == len(BIG.encode()) for t in cut.truncated)
    assert len(cut.model_dump_json()) < 4 * MAX_VALUE_BYTES


def test_a_huge_structure_and_many_values_are_bounded_too() -> None:
    many = {f"k{i}": "v" * 1000 for i in range(200)}
    nested = {"rows": [[i] * 100 for i in range(1000)]}
    for arguments in (many, nested):
        cut = bounded(
            row("c", True).model_copy(
                update={"calls": [CallRecord(turn=0, id="1", name="f", arguments=arguments)]}
            )
        )
        assert len(json.dumps(cut.calls[0].arguments)) <= MAX_CALL_BYTES + 300
        assert cut.truncated


def test_a_small_row_is_left_exactly_as_it_was() -> None:
    small = row("c", True).model_copy(
        update={"calls": [CallRecord(turn=0, id="1", name="f", arguments={"a": "b" * 100})], "text": "short"}
    )
    assert bounded(small) is small
