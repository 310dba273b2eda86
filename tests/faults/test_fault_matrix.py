"""Every fault on every direct wire (the four original ones and the three bundled plugin wires:
Mistral, Cohere, Bedrock), plain and streamed, through the real runner against a loopback fault
server: each faulted episode is an error with its class, never an answer and
never "no call", and nothing reaches stderr as a traceback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.fault_server import FAULTS, STREAM_ONLY, FaultEmulator, expected_kinds
from xpeval.evals.cases import load_cases
from xpeval.evals.cassettes import CassetteStore, Mode
from xpeval.evals.emulator import EmulatorServer
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.results.rows import ResultRow, RunHeader
from xpeval.evals.results.run_plan import RunPlan
from xpeval.evals.running.plan import PlannedEpisode
from xpeval.evals.running.runner import Runner, RunSettings
from xpeval.evals.running.targets import EpisodeFactory, TargetPicker

DIRECT = [
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "google-genai",
    "mistral",
    "cohere",
    "bedrock-converse",
]
CASES = [c.case for c in load_cases() if c.case.category == "simple"][:3]
MATRIX = [
    (fault, stream) for fault in FAULTS for stream in (False, True) if stream or fault not in STREAM_ONLY
]


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as running:
        yield running


def run_faulted(server: EmulatorServer, tmp_path: Path, fault: str, stream: bool) -> list[ResultRow]:
    emulator = FaultEmulator(server, fault, stream=stream)
    factory = EpisodeFactory(
        mode=Mode.LIVE,
        store=CassetteStore(tmp_path / "none"),
        picker=TargetPicker(choice="emulator"),
        emulator=emulator,
        stream_policy="always" if stream else "never",
        timeout=10.0,
    )
    planned = [PlannedEpisode(case, adapter, "m") for case in CASES for adapter in DIRECT]
    header = RunHeader(
        run="faults",
        fingerprint=f"{fault}-{stream}",
        started_at="now",
        config={},
        plan=RunPlan(cases=[c.id for c in CASES], models={a: ["m"] for a in DIRECT}),
    )
    results = ResultsFile.open_for(tmp_path / f"{fault}-{stream}.jsonl", header)
    runner = Runner(
        factory, results, RunSettings(concurrency=4, max_attempts=2, backoff_base=0.0, backoff_cap=0.0)
    )

    async def play() -> None:
        try:
            await runner.run(planned)
        finally:
            await factory.aclose()

    asyncio.run(play())
    results.close()
    return list(final_results(ResultsFile.read(results.path).rows))


@pytest.mark.parametrize(
    ("fault", "stream"), MATRIX, ids=[f"{f}-{'stream' if s else 'plain'}" for f, s in MATRIX]
)
def test_a_fault_is_an_error_of_its_class_never_an_answer(
    server: EmulatorServer,
    tmp_path: Path,
    fault: str,
    stream: bool,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        rows = run_faulted(server, tmp_path, fault, stream)
    assert len(rows) == len(CASES) * len(DIRECT)
    answered = [
        f"{r.adapter}/{r.case_id}: calls={[c.name for c in r.calls]}" for r in rows if r.error_kind is None
    ]
    assert not answered, "scored as the model's answer:\n" + "\n".join(answered)
    wrong_kind = [
        f"{r.adapter}: {r.error_kind} ({r.error_message})"
        for r in rows
        if r.error_kind not in expected_kinds(fault)
    ]
    assert not wrong_kind, "\n".join(wrong_kind)
    assert not any(r.correct for r in rows)
    if fault in ("html-200", "empty-200", "invalid-json"):
        decoded = [r for r in rows if r.error_kind == "decode"]
        assert all("200" in (r.error_message or "") for r in decoded), "a decode error names the status"
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "aclose()" not in captured.err, captured.err[-2000:]
    assert not [rec for rec in caplog.records if rec.exc_info], "no exception logged by asyncio or a library"
