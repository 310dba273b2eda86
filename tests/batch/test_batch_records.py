"""The pure parts of `--batch`: its records under the chain of custody, its limits, its price."""

from __future__ import annotations

import json
from typing import Any

import pytest

from xpeval.adapters.contract import Usage
from xpeval.adapters.wires.batch import BatchLimits
from xpeval.errors import UserError
from xpeval.evals.batch.groups import split
from xpeval.evals.cassettes import Mode
from xpeval.evals.results.batch_records import BatchIntent, BatchSettled
from xpeval.evals.results.rows import RunHeader
from xpeval.evals.running.cost import episode_cost
from xpeval.evals.running.suite import SuiteConfig
from xpeval.evals.verdict.custody import judge

HEADER = RunHeader(run="run-1", fingerprint="f", started_at="2026-12-06T00:00:00+00:00", config={})


def _intent(run: str) -> BatchIntent:
    return BatchIntent(
        run=run,
        batch="xb-1",
        api="openai",
        adapter="openai-chat",
        model="gpt-4.1-mini",
        created_after=0.0,
        episodes=["calc_simple_01"],
        custom_ids=["x1"],
        digests=["d"],
        at="2026-12-06T00:00:00+00:00",
    )


def test_a_batch_record_of_another_run_is_refused_by_the_chain_of_custody() -> None:
    assert judge(HEADER, [_intent("run-1")], {}).refusals == []
    refusals = judge(HEADER, [_intent("run-2")], {}).refusals
    assert refusals and "batch record 'xb-1' is of run 'run-2'" in refusals[0]


def test_a_batch_record_after_the_completion_record_is_refused() -> None:
    from xpeval.evals.results.rows import RunTrailer

    settled = BatchSettled(run="run-1", batch="xb-1", state="ended", detail="completed", at="t")
    refusals = judge(HEADER, [RunTrailer(run="run-1", finished_at="t", rows=0), settled], {}).refusals
    assert any("after the completion record" in r for r in refusals)


def test_a_batch_record_names_each_request_once() -> None:
    twice = {
        **_intent("run-1").model_dump(),
        "episodes": ["a", "b"],
        "custom_ids": ["x", "x"],
        "digests": ["d", "d"],
    }
    with pytest.raises(ValueError, match="custom id twice"):
        BatchIntent.model_validate(twice)


def test_requests_are_split_at_the_apis_request_and_byte_limits() -> None:
    limits = BatchLimits(max_requests=2, max_bytes=10)
    assert split(["a", "b", "c"], [1, 1, 1], limits) == [["a", "b"], ["c"]]
    assert split(["a", "b", "c"], [6, 6, 3], limits) == [["a"], ["b", "c"]]
    assert split(["big"], [99], limits) == [["big"]]  # the provider refuses it; its row says so


@pytest.mark.parametrize(
    ("adapter", "model"), [("openai-chat", "gpt-4.1-mini"), ("anthropic-messages", "claude-haiku-4-5")]
)
def test_a_batched_row_costs_genai_prices_batch_price(adapter: str, model: str) -> None:
    usage = Usage(input_tokens=10_000, output_tokens=2_000)
    at = "2026-12-01T00:00:00+00:00"
    online = episode_cost(adapter_id=adapter, model=model, source="live", usage=usage, at=at)
    batched = episode_cost(
        adapter_id=adapter, model=model, source="live", usage=usage, at=at, processing="batch"
    )
    assert online is not None and batched is not None
    assert batched == pytest.approx(online / 2)


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"mode": Mode.REPLAY}, "a replay asks no one"),
        ({"mode": Mode.RECORD, "stream": "always"}, "Batch APIs do not stream"),
        ({"mode": Mode.RECORD, "batch_poll": 0.0}, "--batch-poll must be a positive"),
    ],
)
def test_a_batch_run_that_cannot_be_one_says_why_in_one_line(changes: dict[str, object], said: str) -> None:
    config = SuiteConfig(batch=True, **changes)  # type: ignore[arg-type]
    with pytest.raises(UserError, match=said):
        config.validate()


def _answer_of(body: bytes) -> Any:
    from xpeval.adapters.wires.batch import BatchAnswer

    return BatchAnswer("x1", "succeeded", 200, body)


def test_a_kept_answer_never_holds_a_secret_the_provider_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    from xpeval.evals.batch.rounds import _kept

    secret = "placeholder-secret-echoed-back-abcdefghij"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    intent = _intent("run-1").model_copy(update={"rounds": [1]})
    kept = _kept(intent, _answer_of(json.dumps({"text": f"your key is {secret}"}).encode()))

    assert kept is not None and secret not in kept.model_dump_json() and "your key is" in kept.body


def test_an_answer_too_large_or_not_text_is_not_kept() -> None:
    from xpeval.evals.batch.rounds import _kept
    from xpeval.evals.results.rows import MAX_ROW_BYTES

    intent = _intent("run-1").model_copy(update={"rounds": [1]})
    assert _kept(intent, _answer_of(b'{"ok": true}')) is not None
    assert _kept(intent, _answer_of(json.dumps({"t": '"' * (MAX_ROW_BYTES // 3)}).encode())) is None
    assert _kept(intent, _answer_of(b"\xff\xfe not utf-8")) is None


def test_an_episode_that_ends_before_asking_all_its_kept_rounds_is_a_mismatch() -> None:
    import asyncio

    import httpx2

    from xpeval.evals.batch.capture import body_digest
    from xpeval.evals.batch.rounds import Round, RoundsTransport
    from xpeval.evals.results.batch_records import BatchAnswerKept

    def kept(number: int) -> Round:
        answer = BatchAnswerKept(
            run="run-1",
            batch="xb-1",
            custom_id=f"x{number}",
            outcome="succeeded",
            status=200,
            body="{}",
            at="t",
        )
        return Round(number, "xb-1", body_digest(b'{"n": %d}' % number), answer)

    transport = RoundsTransport([kept(1), kept(2)], capture=False)
    request = httpx2.Request("POST", "http://provider.invalid/v1/chat/completions", content=b'{"n": 1}')
    answered = asyncio.run(transport.handle_async_request(request))

    assert answered.status_code == 200 and transport.answered == 1
    assert transport.mismatch == "the episode ended after 1 of its 2 batched rounds"
