"""Secrets through the real CLI, against a loopback provider: a base URL's user info and its
credential query values (`api-key`, `api_key`, `code`, `client_secret`, short or long) never
reach the announcement on stderr, a cassette's URI, the results, the reports, `nightly.md`,
`nightly.txt` or `nightly --dry-run`; and a key the provider echoes split across the frames of
a stream leaves no piece of itself in any frame of the cassette, on every direct wire."""

from __future__ import annotations

import json
import secrets as random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._cli import Cli, xpeval
from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.evals.emulator import EmulatorServer, Reply
from xpeval.evals.scrub import PIECE

DIRECT = ("openai-chat", "openai-responses", "anthropic-messages", "google-genai")


def planted(label: str) -> str:
    return f"{label}{random.token_hex(12)}"


@pytest.fixture(scope="module")
def provider() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def every_file(folder: Path) -> dict[str, str]:
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file()}


def leaks(texts: dict[str, str], planted_values: list[str]) -> dict[str, list[str]]:
    found = {where: [v for v in planted_values if v in text] for where, text in texts.items()}
    return {where: values for where, values in found.items() if values}


class BaseUrl:
    """A base URL carrying credentials in every place one can: user info, the query."""

    def __init__(self, server: EmulatorServer) -> None:
        self.user, self.password = planted("user"), planted("pass")
        self.api_key, self.api_key2 = planted("apikey"), planted("apikey2")
        self.code, self.short_code, self.client_secret = planted("code"), "c0de42", planted("client")
        host = server.url.removeprefix("http://")
        query = (
            f"api-key={self.api_key}&api_key={self.api_key2}&code={self.code}"
            f"&client_secret={self.client_secret}&state=kept&Code={self.short_code}"
        )
        self.url = f"http://{self.user}:{self.password}@{host}/v1?{query}"

    @property
    def values(self) -> list[str]:
        return [
            self.user,
            self.password,
            self.api_key,
            self.api_key2,
            self.code,
            self.client_secret,
            f"={self.short_code}",
        ]


def test_a_base_urls_credentials_reach_no_line_printed_and_no_file_written(
    provider: EmulatorServer, tmp_path: Path
) -> None:
    provider.script([Reply(result=TurnResult(text="ok"))] * 20, name="default")
    base = BaseUrl(provider)
    run = xpeval(
        "run",
        "--mode",
        "record",
        "--target",
        "provider",
        "--adapters",
        "openai-compatible",
        "--cases",
        "calc_simple_01",
        "--no-progress",
        "--cassettes",
        str(tmp_path / "cassettes"),
        "--results",
        str(tmp_path / "reports" / "results.jsonl"),
        "--reports",
        str(tmp_path / "reports"),
        env={"OPENAI_COMPATIBLE_BASE_URL": base.url},
    )
    received = [r.target for r in provider.received if base.code in r.target]
    assert received, "the credentials in the base URL really went out"
    announcement = next(line for line in run.stderr.splitlines() if "live provider" in line)
    assert "http://<scrubbed>@127.0.0.1:" in announcement and "state=kept" in announcement
    texts = every_file(tmp_path)
    texts["stdout+stderr"] = run.stdout + run.stderr
    assert leaks(texts, base.values) == {}
    [cassette] = [t for where, t in texts.items() if where.endswith("calc_simple_01.yaml")]
    assert "uri: http://<scrubbed>@127.0.0.1:" in cassette and "code=<scrubbed>" in cassette


def test_the_nightly_and_its_dry_run_never_show_a_base_urls_credentials(
    provider: EmulatorServer, tmp_path: Path
) -> None:
    provider.script([Reply(result=TurnResult(text="ok"))] * 20, name="default")
    base = BaseUrl(provider)
    env = {"OPENAI_COMPATIBLE_BASE_URL": base.url}
    common = ["--adapters", "openai-compatible", "--cases", "calc_simple_01", "--no-schemas"]
    folders = [
        "--reports",
        str(tmp_path / "nightly"),
        "--history",
        str(tmp_path / "history"),
        "--no-progress",
    ]
    dry = xpeval("nightly", "--dry-run", *common, *folders, env=env)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "openai-compatible: live provider http://<scrubbed>@" in dry.stdout
    night = xpeval("nightly", *common, *folders, env=env)
    assert (tmp_path / "nightly" / "nightly.md").exists(), night.stdout + night.stderr
    texts = every_file(tmp_path)
    texts["dry run"] = dry.stdout + dry.stderr
    texts["nightly"] = night.stdout + night.stderr
    assert leaks(texts, base.values) == {}
    assert "http://<scrubbed>@" in texts[str(tmp_path / "nightly" / "nightly.md")]
    assert "http://<scrubbed>@" in texts[str(tmp_path / "nightly" / "nightly.txt")]


KEY_VARIABLES = {
    "openai-chat": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    "openai-responses": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    "anthropic-messages": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""),
    "google-genai": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", ""),
}


def pieces(secret: str) -> set[str]:
    return {secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)}


@pytest.mark.slow
@pytest.mark.parametrize("adapter", DIRECT)
def test_a_key_echoed_split_across_stream_frames_leaves_no_piece_in_any_frame(
    provider: EmulatorServer, tmp_path: Path, adapter: str, cli: Cli
) -> None:
    # In this process (the `cli` fixture): what is checked is the files written, which a fresh
    # interpreter would write the same; the two tests above read every line printed, from a
    # process of its own.
    key = planted("sk-echoed-key-")
    call = ToolCall(
        id="call_1",
        name="convert_units",
        arguments={"value": 26.2, "from_unit": "mi", "to_unit": "km", "note": f"your key {key} ok"},
    )
    # Every wire's stream carries the text and the arguments in pieces: the key spans frames.
    echo = Reply(result=TurnResult(text=f"Your key is {key}, right?", tool_calls=[call]))
    provider.script([echo] * 4, name="default")
    key_variable, url_variable, prefix = KEY_VARIABLES[adapter]
    cassettes = tmp_path / "cassettes"
    flags = ["--adapters", adapter, "--cases", "calc_simple_01", "--stream", "always", "--no-progress"]
    folders = ["--cassettes", str(cassettes), "--reports", str(tmp_path / "reports")]
    env = {key_variable: key, url_variable: provider.url + prefix}
    record = cli(
        "run", "--mode", "record", "--target", "provider", *flags, *folders,
        "--results", str(tmp_path / "recorded.jsonl"), env=env,
    )  # fmt: skip
    [path] = cassettes.rglob("*.yaml")
    recorded = path.read_text(encoding="utf-8")
    assert recorded.count("data:") > 3, "a real stream, frame by frame"
    found = sorted(piece for piece in pieces(key) if piece in recorded)
    assert found == [], f"pieces of the echoed key left in the cassette: {found}"
    assert "<scrubbed>" in recorded
    rows = (tmp_path / "recorded.jsonl").read_text(encoding="utf-8")
    assert not any(piece in rows for piece in pieces(key))
    assert record.returncode in (0, 1), record.stdout + record.stderr

    replay = cli(*["run", *flags, *folders], "--results", str(tmp_path / "replayed.jsonl"))
    lines = (tmp_path / "replayed.jsonl").read_text(encoding="utf-8").splitlines()
    rows_played = [json.loads(line) for line in lines if '"case_id"' in line]
    # The replay also plays the models the baseline names (no cassette here): the recorded one is ours.
    [row] = [r for r in rows_played if r["model"] == path.parent.name]
    assert row["error_kind"] is None, replay.stdout + replay.stderr
    assert "Your key is <scrubbed>, right?" in (row["text"] or "")
    assert [c["name"] for c in row["calls"]] == ["convert_units"]
