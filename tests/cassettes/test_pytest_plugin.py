"""The cassette modes in pytest: one flag, the same three modes as the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cassettes._episodes import SIMPLE

TEST_FILE = textwrap.dedent(f'''
    import asyncio

    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.contract import TurnResult
    from xpeval.adapters.registry import create_adapter
    from xpeval.adapters.wires import get_wire
    from xpeval.evals.cases import load_cases
    from xpeval.evals.emulator import Reply, ScriptedTransport

    CASE = next(i.case for i in load_cases() if i.case.id == "{SIMPLE}")


    def test_weather(xpeval_cassette, xpeval_cassette_mode):
        upstream = ScriptedTransport(get_wire("openai-chat"), [Reply(result=TurnResult(text="42.2 km"))])
        episode = xpeval_cassette("openai-chat", CASE.id, model="m", source="emulated",
                                   upstream=upstream.transport())

        async def go():
            adapter = create_adapter("openai-chat", AdapterSettings(model="m", transport=episode.transport))
            return await adapter.turn(CASE.turn_request("m"))

        assert asyncio.run(go()).text == "42.2 km"
''')


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest of its own in `folder`, as a user's project runs it: xpeval's plugin loaded through
    its pytest11 entry point, the cassette mode read from that run's flags and environment."""
    env = {k: v for k, v in os.environ.items() if k != "XPEVAL_CASSETTE_MODE"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(folder),
        "--xpeval-cassette-dir",
        str(folder / "cassettes"),
        *args,
        str(folder / "test_it.py"),
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=folder, env=env, timeout=120)


@pytest.mark.slow
def test_replay_is_the_default_and_a_record_run_makes_it_pass(tmp_path: Path) -> None:
    (tmp_path / "test_it.py").write_text(TEST_FILE)
    missing = run(tmp_path)
    assert missing.returncode == 1
    assert f"no cassette for adapter openai-chat and case {SIMPLE}" in missing.stdout
    assert (
        f"xpeval run --mode record --adapters openai-chat --cases {SIMPLE} --models openai-chat=m"
        in missing.stdout
    )
    recorded = run(tmp_path, "--xpeval-cassette-mode", "record")
    assert recorded.returncode == 0, recorded.stdout
    assert (tmp_path / "cassettes" / "openai-chat" / "m" / f"{SIMPLE}.yaml").exists()
    replayed = run(tmp_path)
    assert replayed.returncode == 0, replayed.stdout
