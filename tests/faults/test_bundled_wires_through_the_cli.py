"""`xpeval run --mode live` against loopback fault servers standing in for the three bundled
wires' providers (Mistral, Cohere, Bedrock), as `test_faults_through_the_cli.py` does for the
four original ones: every fault of the suite ends as an error row of its class, never an
answer; stderr holds no traceback; no piece of a provider's key reaches the results, stdout or
stderr; and a server that stalls ends the episode in a `timeout` within `--timeout`, on every
one of the three (Cohere's SDK sends through an httpx bridge that must carry the timeout)."""

from __future__ import annotations

import json
import random
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._cli import xpeval
from tests.faults.fault_server import ANSWER, FAULTS, STREAM_ONLY, FaultReply, PinnedReply, expected_kinds
from xpeval.evals.emulator import EmulatorServer, Reply

BUNDLED = ("mistral", "cohere", "bedrock-converse")
CASES = "calc_simple_01,weather_simple_01"
EPISODES = 2 * len(BUNDLED)
KEYS = {adapter: "".join(random.SystemRandom().choices(string.ascii_letters, k=26)) for adapter in BUNDLED}
"""Keys made up per session, of letters only (no 6-character piece of one turns up by chance)."""
STALL = 6.0
"""Seconds the server stalls (before its headers, or between two frames)."""
MATRIX = [
    (fault, stream) for fault in FAULTS for stream in (False, True) if stream or fault not in STREAM_ONLY
]


class Providers:
    """Two loopback servers: one for Cohere and Bedrock (each has a path of its own), one for
    Mistral (its path is OpenAI Chat's, so that server renders every reply as Mistral's)."""

    def __init__(self, mistral: EmulatorServer, others: EmulatorServer) -> None:
        self.mistral = mistral
        self.others = others

    def script(self, reply: Reply, pinned: Reply) -> None:
        self.others.script([reply] * (EPISODES * 4), name="default")
        self.mistral.script([pinned] * (EPISODES * 4), name="default")

    def environment(self) -> dict[str, str]:
        return {
            "MISTRAL_API_KEY": KEYS["mistral"],
            "MISTRAL_BASE_URL": self.mistral.url,
            "CO_API_KEY": KEYS["cohere"],
            "CO_API_URL": self.others.url,
            "AWS_BEARER_TOKEN_BEDROCK": KEYS["bedrock-converse"],
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.others.url,
        }


@pytest.fixture
def providers() -> Iterator[Providers]:
    with EmulatorServer() as mistral, EmulatorServer() as others:
        yield Providers(mistral, others)


def run_live(
    providers: Providers, tmp_path: Path, *flags: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    results = tmp_path / "results.jsonl"
    run = xpeval(
        "run", "--mode", "live", "--target", "provider", "--adapters", ",".join(BUNDLED), "--cases", CASES,
        "--retries", "0", "--no-progress", "--results", str(results), "--reports", str(tmp_path / "reports"),
        *flags, env=providers.environment(),
    )  # fmt: skip
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    return run, [row for row in rows if "case_id" in row]


def key_pieces(text: str) -> list[str]:
    return sorted({key[i : i + 6] for key in KEYS.values() for i in range(21) if key[i : i + 6] in text})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "stream"), MATRIX, ids=[f"{f}-{'stream' if s else 'plain'}" for f, s in MATRIX]
)
def test_every_fault_is_an_error_row_of_its_class_with_no_traceback_and_no_key(
    providers: Providers, tmp_path: Path, fault: str, stream: bool
) -> None:
    providers.script(FaultReply(fault=fault), FaultReply(fault=fault, wire="mistral-chat"))
    run, rows = run_live(providers, tmp_path, "--stream", "always" if stream else "never")
    assert len(rows) == EPISODES, run.stdout + run.stderr
    wrong = [
        f"{row['adapter']}: {row['error_kind']} ({row['error_message']})"
        for row in rows
        if row["error_kind"] not in expected_kinds(fault)
    ]
    assert wrong == [], "\n".join(wrong)
    assert not any(row["correct"] for row in rows)
    assert "Traceback" not in run.stderr and "aclose()" not in run.stderr, run.stderr[-3000:]
    written = (tmp_path / "results.jsonl").read_text() + run.stdout + run.stderr
    assert key_pieces(written) == []
    assert run.returncode == 1


@pytest.mark.slow
@pytest.mark.parametrize("stream", [False, True], ids=["before-the-headers", "between-frames"])
def test_a_provider_that_stalls_ends_in_a_timeout_within_the_requested_one(
    providers: Providers, tmp_path: Path, stream: bool
) -> None:
    # Longer than --timeout 1 and shorter than the episode's own limit (8 x the timeout): an
    # adapter that drops the request's timeout answers after the stall instead.
    stall = Reply(result=ANSWER, chunk_delay=STALL) if stream else Reply(result=ANSWER, delay=STALL)
    providers.script(stall, PinnedReply(result=ANSWER, chunk_delay=stall.chunk_delay, delay=stall.delay))
    run, rows = run_live(providers, tmp_path, "--timeout", "1", "--stream", "always" if stream else "never")
    assert len(rows) == EPISODES, run.stdout + run.stderr
    late = [
        f"{row['adapter']}: {row['error_kind']} after {row['latency_s']} s ({row['error_message']})"
        for row in rows
        if row["error_kind"] != "timeout" or row["latency_s"] >= STALL - 1
    ]
    assert late == [], "\n".join(late)
