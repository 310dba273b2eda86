"""`xpeval compare` and `xpeval gate --reference` judge a vendor only on evidence: a reference run
is identified by its cases' content (never by its case folder's name), an episode that ended in
an error is never a true negative, and a vendor that failed requests the reference answered
fails. Every run here is `xpeval run` in a scratch project, against a loopback server or the
emulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._cli import Cli
from xpeval.adapters.contract import TurnResult
from xpeval.evals.emulator import EmulatorServer, Reply

REQUESTS = 30
"""Real traffic as unlabelled cases (what `xpeval cases requests` writes): judged against the
reference only, so no accuracy test stands in for what the reference comparison must see."""


def traffic_project(root: Path, ask: str = "What is the weather in city {i}?") -> Path:
    """A scratch project whose case set is `REQUESTS` unlabelled requests offering one tool."""
    from xpeval.evals.cases import Case

    cases = [
        Case.model_validate(
            {
                "id": f"traffic_{i:05d}",
                "category": "unlabelled",
                "tools": [
                    {
                        "name": "get_weather",
                        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                    }
                ],
                "messages": [{"role": "user", "content": ask.format(i=i)}],
            }
        )
        for i in range(REQUESTS)
    ]
    (root / "traffic").mkdir(parents=True)
    (root / "traffic" / "requests.jsonl").write_text("".join(c.model_dump_json() + "\n" for c in cases))
    (root / "pyproject.toml").write_text('[tool.xpeval]\ncases = "traffic"\n')
    return root


def _model(results: Path, adapter: str) -> str:
    rows = [json.loads(line) for line in results.read_text().splitlines()[1:]]
    return next(str(r["model"]) for r in rows if r.get("adapter") == adapter)


def _live_run(cli: Cli, root: Path, name: str, replies: list[Reply]) -> Path:
    """A live run of openai-chat on the project's requests, every request answered by the next
    of `replies` from a loopback server; no retries (an HTTP 500 is the episode's end)."""
    results = root / f"{name}.jsonl"
    with EmulatorServer() as server:
        server.script(replies, name="default")
        ran = cli(
            "run", "--mode", "live", "--target", "provider", "--adapters", "openai-chat",
            "--retries", "0", "--concurrency", "1", "--no-baseline",
            "--no-progress", "--results", str(results), "--reports", str(root / name),
            cwd=root,
            env={"OPENAI_API_KEY": "loopback-key", "OPENAI_BASE_URL": f"{server.url}/v1"},
        )  # fmt: skip
    assert results.is_file(), ran.stdout + ran.stderr
    return results


DECLINES = Reply(result=TurnResult(text="None of these tools applies."))
FAILS = Reply.http_error(500, "internal error")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The official API, in its own project on the same requests: it calls no tool on any."""
    from tests._cli import in_process

    root = traffic_project(tmp_path_factory.mktemp("official"))
    results = root / "official.jsonl"
    with EmulatorServer() as server:
        server.script([DECLINES] * REQUESTS, name="default")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", "loopback-key")
            patch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
            ran = in_process(
                "run", "--mode", "live", "--target", "provider", "--adapters", "openai-chat",
                "--retries", "0", "--no-baseline", "--no-progress",
                "--results", str(results), "--reports", str(root / "reports"),
                cwd=root,
            )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return results


def test_a_vendor_whose_every_request_got_http_500_fails_and_its_errors_are_no_negatives(
    reference: Path, tmp_path: Path, cli: Cli
) -> None:
    root = traffic_project(tmp_path / "vendor")
    vendor = _live_run(cli, root, "vendor", [FAILS] * REQUESTS)
    spec = f"openai-chat={_model(reference, 'openai-chat')}"

    done = cli(
        "compare", str(vendor), "--reference", spec, "--against", str(reference), "--out", str(tmp_path),
        cwd=root,
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"| 0/0/0/0, {REQUESTS} errors |" in done.stdout
    assert f"{REQUESTS} of {REQUESTS} requests the reference answered ended in an error" in done.stdout
    assert "| pass |" not in done.stdout


def test_gate_refuses_a_vendor_that_failed_half_the_requests_a_reference_without_calls_answered(
    reference: Path, tmp_path: Path, cli: Cli
) -> None:
    root = traffic_project(tmp_path / "vendor")
    failed = REQUESTS // 2
    vendor = _live_run(cli, root, "vendor", [FAILS] * failed + [DECLINES] * (REQUESTS - failed))
    spec = f"openai-chat={_model(reference, 'openai-chat')}"

    gate = cli("gate", "--results", str(vendor), "--reference", spec, "--against", str(reference), cwd=root)

    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert f"{failed} of {REQUESTS} requests the reference answered ended in an error" in gate.stdout


def test_a_reference_recorded_on_other_requests_in_a_folder_of_the_same_name_is_refused(
    reference: Path, tmp_path: Path, cli: Cli
) -> None:
    root = traffic_project(tmp_path / "vendor", ask="Is it raining in city {i}?")
    vendor = _live_run(cli, root, "vendor", [DECLINES] * REQUESTS)
    spec = f"openai-chat={_model(reference, 'openai-chat')}"
    assert json.loads(reference.read_text().splitlines()[0])["config"]["case_set"] == "traffic"

    compared = cli("compare", str(vendor), "--reference", spec, "--against", str(reference), "--out",
                   str(tmp_path), cwd=root)  # fmt: skip
    gated = cli("gate", "--results", str(vendor), "--reference", spec, "--against", str(reference), cwd=root)

    for done in (compared, gated):
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert f"ran different case sets: {REQUESTS} of the {REQUESTS} cases both ran differ in content" in (
            done.stderr
        )
