"""A task row keeps what its reward is judged on, bounded: the agent's texts (`said`, the first
`MAX_ROW_SAID`, each cut to `MAX_VALUE_BYTES`) and how the conversation ended."""

from __future__ import annotations

import hashlib

from tests.gate._rows import row
from xpeval.evals.results.rows import MAX_ROW_SAID, MAX_VALUE_BYTES, bounded


def test_a_task_rows_texts_are_bounded_in_number_and_size() -> None:
    long = "y" * (2 * MAX_VALUE_BYTES)
    said = [long, *(f"message {i}" for i in range(1, MAX_ROW_SAID + 6))]
    cut = bounded(row("task", True).model_copy(update={"said": said, "ended": "user_stop"}))
    assert cut.said is not None and len(cut.said) == MAX_ROW_SAID
    assert cut.said[1:3] == ["message 1", "message 2"] and cut.ended == "user_stop"
    digest = hashlib.sha256(long.encode()).hexdigest()
    assert digest in cut.said[0] and len(cut.said[0].encode()) < MAX_VALUE_BYTES + 200
    notes = {note.field: note for note in cut.truncated}
    assert notes["said[0]"].sha256 == digest
    rest = "\n".join(said[MAX_ROW_SAID:]).encode()
    assert notes[f"said[{MAX_ROW_SAID}:]"].sha256 == hashlib.sha256(rest).hexdigest()


def test_a_row_without_a_task_keeps_no_texts() -> None:
    plain = bounded(row("c1", True))
    assert (plain.said, plain.ended) == (None, None)
