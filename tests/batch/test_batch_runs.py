"""`xpeval run --batch` against the emulator's Batch APIs: the same rows as online, every
request accounted for, and a run killed mid-poll resumed without submitting anything twice."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pandas as pd
import pytest

from tests._corpus import REPO_ROOT
from xpeval.adapters.wires.batch import BatchRequest, EmulatedBatch, batch_api
from xpeval.errors import UserError
from xpeval.evals.cases import load_cases
from xpeval.evals.cases.loader import BUILTIN_DIR
from xpeval.evals.cassettes import Mode
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.emulator.batches import BatchKnobs, Fault
from xpeval.evals.emulator.case_script import CaseEmulator
from xpeval.evals.emulator.server import EmulatorServer
from xpeval.evals.results.batch_records import BatchIntent, BatchSettled, BatchSubmitted
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.load import load_run
from xpeval.evals.results.merge import merge_shards
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.custody import VERDICT_FIELDS, check_custody
from xpeval.evals.verdict.scorecard import scorecard

pytestmark = pytest.mark.slow  # each plays a run (or two) of the emulator's cases

ADAPTERS = ("openai-chat", "openai-responses", "anthropic-messages", "google-genai", "bedrock-converse")
BEDROCK_MODEL = "emulated.converse-v1:0"
"""Bedrock's emulated model: none of `bedrock_batch.MIN_RECORDS`, so a job of a few records runs
(the default model's minimum, 100 records, is pinned by its own test)."""
CASES = ("calc_*", "weather_*", "files_multi_turn_*", "files_approval_*")
"""Single-turn cases of every category the emulator answers (simple, multiple, parallel,
irrelevance), and multi-turn and approval cases, whose turns go as successive batches."""
VERDICT = list(VERDICT_FIELDS)
"""A row's verdict columns, as custody scores them again."""


def _models(adapters: tuple[str, ...]) -> tuple[str, ...]:
    return (f"bedrock-converse={BEDROCK_MODEL}",) if "bedrock-converse" in adapters else ()


def _config(tmp: Path, name: str, **changes: Any) -> SuiteConfig:
    changes.setdefault("models", _models(changes.get("adapters", ADAPTERS)))
    settings: dict[str, Any] = {
        "mode": Mode.RECORD,
        "adapters": ADAPTERS,
        "cases": CASES,
        "target": "emulator",
        "cassettes": tmp / name / "cassettes",
        "results": tmp / name / "results.jsonl",
        "reports": tmp / name / "reports",
        "no_baseline": True,
        "root": tmp,
        "batch_poll": 0.02,
        **changes,
    }
    return SuiteConfig(**settings)


def _rows(results: Path) -> pd.DataFrame:
    frame = load_run(results).frame
    return frame.set_index(["case_id", "adapter", "model"]).sort_index()


def _rates(results: Path) -> pd.DataFrame:
    card = scorecard(load_run(results).frame)
    return card.drop(columns=[c for c in card.columns if "latency" in c or "cost" in c])


@pytest.fixture(scope="module")
def online(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("online")
    outcome = run_suite(_config(tmp, "online"))
    assert outcome.passed
    return outcome.results.path


@pytest.fixture
def emulator(request: pytest.FixtureRequest) -> Iterator[EmulatorServer]:
    knobs = getattr(request, "param", None) or BatchKnobs()
    with EmulatorServer(batch_knobs=knobs) as server:
        yield server


def test_a_batch_recording_has_the_rows_and_rates_of_an_online_one(
    online: Path, emulator: EmulatorServer, tmp_path: Path
) -> None:
    outcome = run_suite(_config(tmp_path, "batch", batch=True), emulator=CaseEmulator(emulator))

    batched, asked = _rows(outcome.results.path), _rows(online)
    assert list(batched.index) == list(asked.index)
    assert batched[[*VERDICT, "error_kind"]].equals(asked[[*VERDICT, "error_kind"]])
    assert _rates(outcome.results.path).equals(_rates(online))
    # Per adapter one batch of single-turn requests and one per round of the multi-turn
    # episodes' turns; each request once, answered in another order than it was sent.
    records = ResultsFile.read(outcome.results.path).batches
    intents = [r for r in records if isinstance(r, BatchIntent)]
    assert emulator.batches.creates == len(intents)
    assert sorted(i.adapter for i in intents if i.rounds is None) == sorted(ADAPTERS)
    rounds = {(i.adapter, tuple(sorted(set(i.rounds)))) for i in intents if i.rounds is not None}
    assert {adapter for adapter, _ in rounds} == set(ADAPTERS)
    assert max(max(numbers) for _, numbers in rounds) >= 4  # a three-turn case's later turns
    assert set(emulator.batches.submitted.values()) == {1}
    for batch in emulator.batches.batches():
        if len(batch.requests) > 2:
            assert [a.custom_id for a in batch.answers] != [r.custom_id for r in batch.requests]
    kinds = Counter(r.type for r in records)
    assert kinds["batch"] == kinds["batch_submitted"] == kinds["batch_settled"] == len(intents)
    assert kinds["batch_answer"] == sum(len(i.custom_ids) for i in intents if i.rounds is not None)
    check_custody(load_run(outcome.results.path), tmp_path)  # the gate's chain of custody reads them


def test_a_batch_recording_replays_like_an_online_one(emulator: EmulatorServer, tmp_path: Path) -> None:
    recorded = run_suite(_config(tmp_path, "batch", batch=True), emulator=CaseEmulator(emulator))
    store = CassetteStore(tmp_path / "batch" / "cassettes")
    for case_id in ("calc_simple_01", "weather_multi_turn_01", "files_approval_02"):
        metas = [store.meta(p) for p in (tmp_path / "batch" / "cassettes").rglob(f"{case_id}.yaml")]
        assert [m.delivery for m in metas if m is not None] == ["batch"] * len(ADAPTERS)

    replayed = run_suite(
        _config(tmp_path, "batch", mode=Mode.REPLAY, results=tmp_path / "replay.jsonl", batch_poll=30.0)
    )
    assert replayed.passed
    assert _rows(replayed.results.path)[VERDICT].equals(_rows(recorded.results.path)[VERDICT])


@functools.cache
def _prompt_of(case_id: str) -> str:
    case = next(item.case for item in load_cases(BUILTIN_DIR) if item.case.id == case_id)
    text = case.turns[0].messages[-1].content
    assert isinstance(text, str)
    return text


FAULTS: dict[str, Fault] = {
    "calc_simple_01": "expired",
    "calc_simple_02": "errored",
    "calc_multiple_01": "missing",
}


def _fault(request: BatchRequest) -> Fault | None:
    body = json.loads(request.body)
    text = json.dumps(body, ensure_ascii=False)
    for case_id, fault in FAULTS.items():
        if json.dumps(_prompt_of(case_id), ensure_ascii=False)[1:-1] in text:
            return fault
    return None


@pytest.mark.parametrize("emulator", [BatchKnobs(fault=_fault)], indirect=True)
def test_expired_errored_and_missing_answers_are_each_an_error_row_of_their_kind(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    outcome = run_suite(_config(tmp_path, "faults", batch=True), emulator=CaseEmulator(emulator))

    rows = _rows(outcome.results.path).reset_index()
    kinds = {(r.case_id, r.adapter): r.error_kind for r in rows.itertuples()}
    for adapter in ADAPTERS:
        assert kinds[("calc_simple_01", adapter)] == "batch_expired"
        assert kinds[("calc_simple_02", adapter)] == "batch_errored"
        # A Bedrock job expires as a whole: a record it left out is one it did not reach.
        missing = "batch_expired" if adapter == "bedrock-converse" else "batch_missing"
        assert kinds[("calc_multiple_01", adapter)] == missing
    assert rows["error_kind"].notna().sum() == 3 * len(ADAPTERS)
    failed = rows[rows["error_kind"].notna()]
    assert not failed["correct"].any()  # an episode without an answer fails, never "no call"
    records = ResultsFile.read(outcome.results.path).batches
    single = {r.batch: r.adapter for r in records if isinstance(r, BatchIntent) and r.rounds is None}
    settled = [r for r in records if isinstance(r, BatchSettled) and r.batch in single]
    assert len(settled) == len(ADAPTERS)
    for record in settled:
        if single[record.batch] == "bedrock-converse":
            assert (record.state, record.counts.get("expired"), record.counts.get("errored")) == (
                "expired",
                2,
                1,
            )
        else:
            assert (
                record.counts.get("expired")
                == record.counts.get("errored")
                == record.counts.get("missing")
                == 1
            )


@pytest.mark.parametrize(
    "emulator", [BatchKnobs(fault=lambda r: None if _fault(r) == "expired" else _fault(r))], indirect=True
)
def test_a_bedrock_job_that_completed_partially_leaves_missing_and_errored_rows(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    config = _config(tmp_path, "partial", batch=True, adapters=("bedrock-converse",), cases=("calc_*",))
    outcome = run_suite(config, emulator=CaseEmulator(emulator))

    kinds = dict(
        zip(*(_rows(outcome.results.path).reset_index()[c] for c in ("case_id", "error_kind")), strict=True)
    )
    assert kinds["calc_multiple_01"] == "batch_missing" and kinds["calc_simple_02"] == "batch_errored"
    assert sum(isinstance(kind, str) for kind in kinds.values()) == 2
    (settled,) = [r for r in ResultsFile.read(outcome.results.path).batches if r.type == "batch_settled"]
    assert settled.detail == "PartiallyCompleted"


def _records(results: Path) -> list[dict[str, Any]]:
    if not results.exists():
        return []
    return [
        json.loads(line) for line in results.read_bytes().splitlines(keepends=True) if line.endswith(b"\n")
    ]


def _batch_command(tmp: Path, url: str) -> list[str]:
    return [
        sys.executable, "-m", "xpeval", "run", "--mode", "record", "--target", "emulator",
        "--emulator-url", url, "--batch", "--batch-poll", "0.05", "--adapters", ",".join(ADAPTERS),
        "--models", f"bedrock-converse={BEDROCK_MODEL}",
        "--cases", ",".join(CASES), "--cassettes", str(tmp / "cassettes"), "--results",
        str(tmp / "results.jsonl"), "--reports", str(tmp / "reports"), "--no-baseline", "--no-progress",
    ]  # fmt: skip


@pytest.mark.parametrize("emulator", [BatchKnobs(polls_before_end=10**9)], indirect=True)
def test_a_run_killed_mid_poll_resumes_its_batches_without_submitting_twice(
    online: Path, emulator: EmulatorServer, tmp_path: Path
) -> None:
    command = _batch_command(tmp_path, emulator.url)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO_ROOT)}  # this checkout's xpeval
    first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first_round = 2 * len(ADAPTERS)  # per adapter the single-turn batch and the first round's
    deadline = time.monotonic() + 240
    while sum(r.get("type") == "batch_submitted" for r in _records(tmp_path / "results.jsonl")) < first_round:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the batches were never submitted"
        time.sleep(0.1)
    time.sleep(0.3)  # mid-poll: the batches are pending and polled
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert emulator.batches.creates == first_round
    assert not any(r.get("type") == "batch_settled" for r in _records(tmp_path / "results.jsonl"))

    emulator.batches.knobs.polls_before_end = 1  # the provider finishes them meanwhile
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    assert second.returncode == 0, second.stderr
    assert f"resuming {first_round} batches" in second.stderr
    intents = [r for r in _records(tmp_path / "results.jsonl") if r.get("type") == "batch"]
    assert emulator.batches.creates == len(intents)  # nothing created twice
    assert set(emulator.batches.submitted.values()) == {1}  # no request submitted twice
    records = _records(tmp_path / "results.jsonl")
    finals = [(r["case_id"], r["adapter"]) for r in records if r.get("type") == "result" and r["final"]]
    assert len(finals) == len(set(finals))  # one final row per episode
    batched, asked = _rows(tmp_path / "results.jsonl"), _rows(online)
    assert list(batched.index) == list(asked.index)  # none lost
    assert batched[[*VERDICT, "error_kind"]].equals(asked[[*VERDICT, "error_kind"]])
    assert _rates(tmp_path / "results.jsonl").equals(_rates(online))


TOOL_RESULTS = (b'"tool"', b"function_call_output", b"tool_result", b"functionResponse")
"""How each built wire's request carries a tool's result (Chat's role, Responses' item, Anthropic's
block, Gemini's part): a request with one is a multi-turn episode's later turn."""


def _later_round(batch: EmulatedBatch) -> bool:
    return any(marker in request.body for request in batch.requests for marker in TOOL_RESULTS)


def _held_later_rounds(records: list[dict[str, Any]]) -> set[str]:
    """The adapters with a batch of a later round (2 and on) submitted."""
    submitted = {r["batch"] for r in records if r.get("type") == "batch_submitted"}
    return {
        r["adapter"]
        for r in records
        if r.get("type") == "batch" and r.get("rounds") and max(r["rounds"]) >= 2 and r["batch"] in submitted
    }


@pytest.mark.parametrize("emulator", [BatchKnobs(hold=_later_round)], indirect=True)
def test_a_run_killed_mid_poll_in_a_later_round_resumes_its_episodes_without_asking_twice(
    online: Path, emulator: EmulatorServer, tmp_path: Path
) -> None:
    command = _batch_command(tmp_path, emulator.url)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO_ROOT)}  # this checkout's xpeval
    first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while _held_later_rounds(_records(tmp_path / "results.jsonl")) != set(ADAPTERS):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "no later round was ever submitted"
        time.sleep(0.1)
    time.sleep(0.3)  # mid-poll: the later rounds' batches are pending and polled
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    before = _records(tmp_path / "results.jsonl")
    answered = [r for r in before if r.get("type") == "batch_answer"]
    assert answered, "the first round's answers were kept before the kill"
    created = emulator.batches.creates
    assert created == sum(r.get("type") == "batch_submitted" for r in before)

    emulator.batches.knobs.hold = lambda batch: False  # the provider finishes them meanwhile
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)

    assert second.returncode == 0, second.stderr
    assert "resuming" in second.stderr
    records = _records(tmp_path / "results.jsonl")
    intents = [r for r in records if r.get("type") == "batch"]
    assert emulator.batches.creates == len(intents) > created  # each batch created once, later rounds went on
    assert set(emulator.batches.submitted.values()) == {1}  # no request submitted twice
    kept = [r["custom_id"] for r in records if r.get("type") == "batch_answer"]
    assert len(kept) == len(set(kept))  # no answer kept twice: earlier rounds were replayed, not asked
    assert {r["custom_id"] for r in answered} <= set(kept)
    finals = [(r["case_id"], r["adapter"]) for r in records if r.get("type") == "result" and r["final"]]
    assert len(finals) == len(set(finals))  # one final row per episode
    batched, asked = _rows(tmp_path / "results.jsonl"), _rows(online)
    assert list(batched.index) == list(asked.index)  # none lost
    assert batched[[*VERDICT, "error_kind", "steps"]].equals(asked[[*VERDICT, "error_kind", "steps"]])
    assert _rates(tmp_path / "results.jsonl").equals(_rates(online))
    replayed = run_suite(  # the resumed run's cassettes, every turn of them, replay like online ones
        _config(tmp_path, "replay", mode=Mode.REPLAY, cassettes=tmp_path / "cassettes", batch_poll=30.0)
    )
    assert replayed.passed
    assert _rows(replayed.results.path)[VERDICT].equals(batched[VERDICT])


class _Killed(BaseException):
    """Stands for the process dying: nothing after it runs."""


@pytest.mark.parametrize(
    ("adapter", "api_name"),
    [
        ("openai-chat", "openai"),
        ("anthropic-messages", "anthropic"),
        ("google-genai", "gemini"),
        ("bedrock-converse", "bedrock"),
    ],
)
def test_a_run_killed_between_creating_a_batch_and_writing_its_id_finds_it_again(
    adapter: str, api_name: str, emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = batch_api(api_name)
    submit = type(api).submit

    async def create_then_die(self: Any, client: Any, requests: Any, tag: str) -> str:
        await submit(self, client, requests, tag)
        raise _Killed

    config = _config(tmp_path, "killed", batch=True, adapters=(adapter,), cases=("calc_*",))
    with monkeypatch.context() as patch:
        patch.setattr(type(api), "submit", create_then_die)
        with pytest.raises(_Killed):
            run_suite(config, emulator=CaseEmulator(emulator))
    records = ResultsFile.read(config.results).batches
    assert [r.type for r in records] == ["batch"]  # the intent only: its id was never written
    assert emulator.batches.creates == 1

    outcome = run_suite(config, emulator=CaseEmulator(emulator))

    assert emulator.batches.creates == 1  # found again, not created twice
    submitted = [r for r in ResultsFile.read(config.results).batches if isinstance(r, BatchSubmitted)]
    assert [r.adopted for r in submitted] == [True]
    frame = load_run(outcome.results.path).frame
    assert len(frame) == len(set(frame["case_id"])) and frame["error_kind"].isna().all()


def test_merged_batch_shards_keep_every_batch_accounted_for(emulator: EmulatorServer, tmp_path: Path) -> None:
    shards = []
    for index in (1, 2):
        config = _config(
            tmp_path,
            f"shard{index}",
            batch=True,
            adapters=("openai-chat",),
            cases=("calc_*",),
            shard=f"{index}/2",
            cassettes=tmp_path / "cassettes",  # one run's shards share its settings
        )
        shards.append(run_suite(config, emulator=CaseEmulator(emulator)).results.path)

    merged = merge_shards(shards, tmp_path / "merged.jsonl", vouch=check_custody, root=tmp_path)

    records = ResultsFile.read(merged.path).batches
    assert sorted(r.type for r in records) == sorted(["batch", "batch_submitted", "batch_settled"] * 2)
    assert {r.run for r in records} == {merged.header.run}
    check_custody(load_run(merged.path), tmp_path)  # the merged file is evidence the gate trusts


def test_a_create_that_got_no_answer_stops_the_run_and_its_restart_creates_the_batch_once(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = batch_api("openai")

    async def no_answer(self: Any, client: Any, requests: Any, tag: str) -> str:
        raise httpx2.ConnectError("connection reset")

    config = _config(tmp_path, "lost", batch=True, adapters=("openai-chat",), cases=("calc_*",))
    with monkeypatch.context() as patch:
        patch.setattr(type(api), "submit", no_answer)
        with pytest.raises(UserError, match="start the same run again"):
            run_suite(config, emulator=CaseEmulator(emulator))
    assert [r.type for r in ResultsFile.read(config.results).batches] == ["batch"]

    outcome = run_suite(config, emulator=CaseEmulator(emulator))

    assert emulator.batches.creates == 1
    assert load_run(outcome.results.path).frame["error_kind"].isna().all()


def test_a_bedrock_run_below_its_models_minimum_record_count_is_refused_before_anything_is_created(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    # The adapter's default model is in bedrock_batch.MIN_RECORDS (100 records a job).
    config = _config(
        tmp_path, "small", batch=True, adapters=("bedrock-converse",), cases=("calc_*",), models=()
    )

    with pytest.raises(UserError, match=r"8 requests are too few for a batch \(bedrock needs at least 100\)"):
        run_suite(config, emulator=CaseEmulator(emulator))

    assert emulator.batches.creates == 0
    assert ResultsFile.read(config.results).batches == []
