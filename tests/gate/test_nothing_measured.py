"""A row whose every episode ended in an error measured nothing, and the gate says which and why."""

from __future__ import annotations

import pandas as pd

from xpeval.evals.verdict.gate import evaluate


def _episode(adapter: str, model: str, case_id: str, error: bool, reason: str | None) -> dict[str, object]:
    return {
        "source": "live", "adapter": adapter, "model": model, "case_id": case_id, "error": error,
        "error_kind": "auth" if error else None, "reason": reason,
    }  # fmt: skip


def test_only_a_row_whose_every_episode_failed_is_named_with_its_count_and_first_problem() -> None:
    frame = pd.DataFrame(
        [
            _episode("openai-chat", "gpt-a", "c1", True, "401 bad key; record it with: xpeval run --record"),
            _episode("mistral", "m-1", "c1", True, "timeout"),
            _episode("openai-chat", "gpt-a", "c2", True, "429 slow down"),
            _episode("mistral", "m-1", "c2", False, None),
            _episode("openai-chat", "gpt-b", "c1", True, "x" * 200),
        ]
    )
    findings = [f for f in evaluate(frame, None).findings if f.metric == "measured"]
    assert [(f.key, f.ok) for f in findings] == [
        ("live|openai-chat|gpt-a", False),
        ("live|openai-chat|gpt-b", False),
    ]
    assert findings[0].message == (
        "openai-chat (gpt-a, live): all 2 episodes ended in an error, nothing was measured "
        "(first: 401 bad key)"
    )
    assert findings[1].message.endswith(f"(first: {'x' * 160}...)")
