"""`xpeval run --mode live` against a loopback fault server standing in for every direct wire's
provider, every episode streamed: a stream that ends cleanly without its terminal event (on
Gemini: no chunk with a `finishReason`) is `truncated`, an error frame inside a 200 stream is a
`stream` error, neither is ever scored as the model's answer, and stderr holds no traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._cli import xpeval
from tests.faults.fault_server import FaultReply
from xpeval.evals.emulator import EmulatorServer

DIRECT = ("openai-chat", "openai-responses", "anthropic-messages", "google-genai")
CASES = "calc_simple_01,calc_simple_02,weather_simple_01,calendar_simple_01"
EPISODES = 4 * len(DIRECT)


def provider_environment(url: str) -> dict[str, str]:
    """Every direct wire's provider pointed at `url`, with keys that are no real provider's."""
    return {
        "OPENAI_API_KEY": "fault-server-key-openai",
        "OPENAI_BASE_URL": f"{url}/v1",
        "ANTHROPIC_API_KEY": "fault-server-key-anthropic",
        "ANTHROPIC_BASE_URL": url,
        "GEMINI_API_KEY": "fault-server-key-gemini",
        "GOOGLE_GEMINI_BASE_URL": url,
    }


@pytest.fixture
def faulty_provider(request: pytest.FixtureRequest) -> Iterator[str]:
    with EmulatorServer() as server:
        server.script([FaultReply(fault=request.param)] * (EPISODES * 4), name="default")
        yield server.url


def run_live(url: str, tmp_path: Path) -> tuple[int, str, str, list[dict[str, object]]]:
    """(exit code, stdout, stderr, result rows) of a live run of every direct wire, in a process
    of its own: "no traceback" includes what the interpreter prints on stderr of a stream left
    unclosed (`aclose()`) when it collects it or exits, which in a test process goes to pytest's
    unraisable-exception hook instead."""
    results = tmp_path / "results.jsonl"
    run = xpeval(
        "run",
        "--mode",
        "live",
        "--target",
        "provider",
        "--adapters",
        ",".join(DIRECT),
        "--cases",
        CASES,
        "--stream",
        "always",
        "--retries",
        "0",
        "--no-progress",
        "--results",
        str(results),
        "--reports",
        str(tmp_path / "reports"),
        env=provider_environment(url),
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    return run.returncode, run.stdout, run.stderr, [row for row in rows if "case_id" in row]


@pytest.mark.slow
@pytest.mark.parametrize("faulty_provider", ["no-terminal-event"], indirect=True)
def test_a_stream_that_ends_without_its_terminal_event_is_truncated_on_every_wire(
    faulty_provider: str, tmp_path: Path
) -> None:
    code, stdout, stderr, rows = run_live(faulty_provider, tmp_path)
    assert len(rows) == EPISODES
    kinds = {(row["adapter"], row["error_kind"]) for row in rows}
    assert kinds == {(adapter, "truncated") for adapter in DIRECT}, kinds
    assert not any(row["correct"] for row in rows)
    assert code == 1, stderr[-2000:]
    assert "FAIL google-genai (gemini-2.5-flash, live): all 4 episodes ended in an error" in stdout


@pytest.mark.slow
@pytest.mark.parametrize("faulty_provider", ["error-frame-200"], indirect=True)
def test_an_error_frame_inside_a_200_stream_is_an_error_row_and_no_traceback(
    faulty_provider: str, tmp_path: Path
) -> None:
    code, _, stderr, rows = run_live(faulty_provider, tmp_path)
    assert len(rows) == EPISODES
    kinds = {(row["adapter"], row["error_kind"]) for row in rows}
    assert kinds == {(adapter, "stream") for adapter in DIRECT}, kinds
    assert all("overloaded" in str(row["error_message"]) for row in rows)
    assert "Traceback" not in stderr and "aclose()" not in stderr, stderr[-3000:]
    assert code == 1
