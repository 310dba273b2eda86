"""A recorded body that no longer decodes (cut in half, replaced by garbage) is the cassette's
failure: it fails the gate and `xpeval cassettes check`, naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from xpeval.evals.cassettes import CassetteStore

COMMITTED = CassetteStore(REPO_ROOT / "cassettes")
# One plain and one streamed recording on two wires (streams alternate by case id).
EPISODES = [
    ("openai-chat", "calc_simple_01"),
    ("anthropic-messages", "calc_simple_01"),
    ("google-genai", "weather_simple_01"),
    ("openai-responses", "weather_simple_01"),
]


def broken_copy(tmp_path: Path, adapter: str, case: str, how: str) -> Path:
    model = COMMITTED.models(adapter)[0]
    source = COMMITTED.path(adapter, case, model)
    target = CassetteStore(tmp_path / "cassettes").path(adapter, case, model)
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    document = yaml.safe_load(target.read_text())
    body = document["interactions"][0]["response"]["body"]
    text = body["string"]
    body["string"] = text[: len(text) // 2] if how == "half" else "\x00garbage\x7f not the wire"
    target.write_text(yaml.safe_dump(document))
    return target


@pytest.mark.parametrize("how", ["half", "garbage"])
@pytest.mark.parametrize(("adapter", "case"), EPISODES)
def test_a_broken_recorded_body_fails_the_gate_and_the_check(
    tmp_path: Path, cli: Cli, adapter: str, case: str, how: str
) -> None:
    path = broken_copy(tmp_path, adapter, case, how)
    run = cli(
        "run",
        "--no-progress",
        "--adapters",
        adapter,
        "--cases",
        case,
        "--cassettes",
        str(tmp_path / "cassettes"),
        "--results",
        str(tmp_path / "r.jsonl"),
        "--reports",
        str(tmp_path / "reports"),
        cwd=REPO_ROOT,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "gate: FAILED" in run.stdout and str(path) in run.stdout and "no longer decodes" in run.stdout
    check = cli(
        "cassettes", "check", "--cassettes", str(tmp_path / "cassettes"), "--adapters", adapter, cwd=REPO_ROOT
    )
    assert check.returncode == 1
    assert str(path) in check.stdout and "no longer decodes" in check.stdout
