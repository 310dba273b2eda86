"""Bad input on the command line is one clear line and exit 2; a run says where its answers
come from before it starts, and never falls back to the emulator without being asked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests._cli import Cli, Ran, xpeval


def one_line_exit_2(done: Ran, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(
    ("flags", "word"),
    [
        (["--rate", "0"], "--rate"),
        (["--rate", "-3"], "--rate"),
        (["--timeout", "0"], "--timeout"),
        (["--concurrency", "0"], "--concurrency"),
        (["--concurrency", "100000"], "--concurrency"),
        (["--retries", "-1"], "--retries"),
        (["--categories", "simple,nonsense"], "nonsense"),
        (["--reports", "README.md"], "--reports"),
    ],
)
def test_an_out_of_range_or_unknown_setting_is_one_line_and_exit_2(
    cli: Cli, flags: list[str], word: str, tmp_path: Path
) -> None:
    done = cli("run", "--no-progress", "--results", str(tmp_path / "r.jsonl"), *flags)
    one_line_exit_2(done, word)
    assert not (tmp_path / "r.jsonl").exists(), "nothing starts before the input is checked"


def test_version_and_defaults_in_help() -> None:
    version = xpeval("--version")
    assert version.returncode == 0 and version.stdout.startswith("xpeval ")
    help_text = xpeval("run", "--help").stdout
    assert "(default: 4)" in help_text and "(default: replay)" in help_text


def test_live_without_any_key_does_not_fall_back_to_the_emulator(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "run",
        "--mode",
        "live",
        "--adapters",
        "openai-chat",
        "--no-progress",
        "--results",
        str(tmp_path / "r.jsonl"),
        env={"XPEVAL_LOCAL_MODEL_DIR": str(tmp_path)},
    )
    one_line_exit_2(done, "openai-chat", "OPENAI_API_KEY", "--allow-emulator")


def test_an_allowed_emulator_fallback_is_announced_and_labelled_emulated(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "run",
        "--mode",
        "live",
        "--allow-emulator",
        "--adapters",
        "openai-chat,anthropic-messages",
        "--categories",
        "simple",
        "--no-progress",
        "--results",
        str(tmp_path / "r.jsonl"),
        "--reports",
        str(tmp_path / "reports"),
        env={"XPEVAL_LOCAL_MODEL_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    announced = [line for line in done.stderr.splitlines() if ": emulator, " in line]
    assert len(announced) == 2 and all("pipeline only" in line for line in announced)
    assert done.stderr.index("pipeline only") < done.stderr.index("episodes; scorecard"), (
        "said before the run"
    )
    card = pd.read_csv(tmp_path / "reports" / "scorecard.csv")
    assert set(card["source"]) == {"emulated"}


def test_the_local_model_target_checks_the_server_before_any_request(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "run",
        "--mode",
        "record",
        "--target",
        "local-model",
        "--adapters",
        "openai-compatible",
        "--no-progress",
        "--results",
        str(tmp_path / "r.jsonl"),
        "--cassettes",
        str(tmp_path / "c"),
        env={"XPEVAL_LOCAL_MODEL_DIR": str(tmp_path)},
    )
    one_line_exit_2(done, "not running", "xpeval local-model serve")
    assert not (tmp_path / "r.jsonl").exists() and not (tmp_path / "c").exists()


def test_the_local_model_target_refuses_an_adapter_it_cannot_serve(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "run",
        "--mode",
        "record",
        "--target",
        "local-model",
        "--adapters",
        "google-genai",
        "--no-progress",
        "--results",
        str(tmp_path / "r.jsonl"),
    )
    one_line_exit_2(done, "google-genai")


def test_a_replay_says_per_adapter_where_its_answers_come_from(cli: Cli, tmp_path: Path) -> None:
    done = cli(
        "run",
        "--adapters",
        "openai-compatible,mimo",
        "--categories",
        "irrelevance",
        "--no-progress",
        "--results",
        str(tmp_path / "r.jsonl"),
        "--reports",
        str(tmp_path / "rep"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "openai-compatible: replay cassettes (qwen2.5-coder-0.5b-instruct: 14 local-model; "
        "qwen2.5-coder-1.5b-instruct: 14 local-model)"
    ) in done.stderr
    assert "mimo: replay cassettes (mimo-v2-flash: 14 emulated)" in done.stderr
