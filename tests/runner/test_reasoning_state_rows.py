"""A run over multi-turn cases against the strict emulator reports a loop that loses reasoning
state as its own error kind, `reasoning_state`, and the gate counts it as the suite's failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import Cli
from xpeval.evals.cassettes.meta import Mode
from xpeval.evals.emulator.case_script import CaseEmulator
from xpeval.evals.emulator.server import EmulatorServer
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.baseline import CONFORMANCE_KINDS

ADAPTERS = ("openai-compatible", "openai-responses", "anthropic-messages", "google-genai", "bedrock-converse")


def _final_rows(tmp_path: Path, adapters: tuple[str, ...]) -> list[dict[str, object]]:
    results = tmp_path / "results.jsonl"
    with EmulatorServer(strict=True) as server:
        config = SuiteConfig(
            mode=Mode.LIVE,
            target="emulator",
            allow_emulator=True,
            adapters=adapters,
            categories=("multi_turn",),
            results=results,
            reports=tmp_path / "reports",
            no_baseline=True,
            retries=0,
        )
        run_suite(config, emulator=CaseEmulator(server))
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    return [r for r in rows if r.get("case_id") and r.get("final")]


def test_every_episode_keeps_its_reasoning_state_through_a_strict_emulator(tmp_path: Path) -> None:
    rows = _final_rows(tmp_path, ADAPTERS)
    assert {r["adapter"] for r in rows} == set(ADAPTERS)
    assert [(r["adapter"], r["case_id"], r["error_message"]) for r in rows if r["error_kind"]] == []


def test_a_loop_that_drops_reasoning_content_is_a_reasoning_state_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import xpeval.adapters.wires.openai_chat as chat

    monkeypatch.setattr(chat, "kept_field", lambda data: None)  # reasoning_content never sent back
    rows = _final_rows(tmp_path, ("openai-compatible",))
    assert rows and all(r["error_kind"] == "reasoning_state" for r in rows)
    assert all("Missing `reasoning_content` field" in str(r["error_message"]) for r in rows)
    assert "reasoning_state" in CONFORMANCE_KINDS


def test_xpeval_run_with_a_strict_emulator_fails_the_gate_on_a_loop_that_lost_its_state(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import xpeval.adapters.wires.openai_chat as chat

    args = [
        "run",
        "--mode",
        "live",
        "--target",
        "emulator",
        "--strict-emulator",
        "--categories",
        "multi_turn",
    ]
    args += [
        "--adapters",
        "moonshot",
        "--no-baseline",
        "--no-progress",
        "--results",
        str(tmp_path / "r.jsonl"),
    ]
    args += ["--reports", str(tmp_path / "reports")]
    kept = cli(*args, cwd=tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    monkeypatch.setattr(chat, "kept_field", lambda data: None)  # reasoning_content never sent back
    lost = cli(*args, cwd=tmp_path)
    assert lost.returncode == 1 and "gate: FAILED" in lost.stdout, lost.stdout + lost.stderr
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert {r["error_kind"] for r in rows if r.get("case_id") and r.get("final")} == {"reasoning_state"}
