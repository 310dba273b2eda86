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
from tests._shop import ORDER_CASES, shop_project
from xpeval.adapters.contract import TurnResult
from xpeval.evals.emulator import EmulatorServer, Reply

IRRELEVANCE = 14
"""The built-in irrelevance cases: the reference declines every one (no call)."""


def _model(results: Path, adapter: str) -> str:
    rows = [json.loads(line) for line in results.read_text().splitlines()[1:]]
    return next(str(r["model"]) for r in rows if r.get("adapter") == adapter)


def _live_run(cli: Cli, root: Path, name: str, replies: list[Reply]) -> Path:
    """A live run of openai-chat on the built-in irrelevance cases, every request answered by the
    next of `replies` from a loopback server; no retries (an HTTP 500 is the episode's end)."""
    results = root / f"{name}.jsonl"
    with EmulatorServer() as server:
        server.script(replies, name="default")
        ran = cli(
            "run", "--mode", "live", "--target", "provider", "--adapters", "openai-chat",
            "--categories", "irrelevance", "--retries", "0", "--concurrency", "1", "--no-baseline",
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
    """The official API: it declines every irrelevance case."""
    from tests._cli import in_process

    root = tmp_path_factory.mktemp("official")
    results = root / "official.jsonl"
    with EmulatorServer() as server:
        server.script([DECLINES] * IRRELEVANCE, name="default")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", "loopback-key")
            patch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
            ran = in_process(
                "run", "--mode", "live", "--target", "provider", "--adapters", "openai-chat",
                "--categories", "irrelevance", "--retries", "0", "--no-baseline", "--no-progress",
                "--results", str(results), "--reports", str(root / "reports"),
                cwd=root,
            )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return results


def test_a_vendor_whose_every_request_got_http_500_fails_and_its_errors_are_no_negatives(
    reference: Path, tmp_path: Path, cli: Cli
) -> None:
    vendor = _live_run(cli, tmp_path, "vendor", [FAILS] * IRRELEVANCE)
    spec = f"openai-chat={_model(reference, 'openai-chat')}"

    done = cli(
        "compare", str(vendor), "--reference", spec, "--against", str(reference), "--out", str(tmp_path)
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"| 0/0/0/0, {IRRELEVANCE} errors |" in done.stdout
    assert f"{IRRELEVANCE} of {IRRELEVANCE} requests the reference answered ended in an error" in done.stdout
    assert "| pass |" not in done.stdout


def test_gate_refuses_a_vendor_that_failed_half_the_requests_a_reference_without_calls_answered(
    reference: Path, tmp_path: Path, cli: Cli
) -> None:
    failed = IRRELEVANCE // 2
    vendor = _live_run(cli, tmp_path, "vendor", [FAILS] * failed + [DECLINES] * (IRRELEVANCE - failed))
    spec = f"openai-chat={_model(reference, 'openai-chat')}"

    gate = cli(
        "gate", "--results", str(vendor), "--reference", spec, "--against", str(reference), cwd=tmp_path
    )

    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert f"{failed} of {IRRELEVANCE} requests the reference answered ended in an error" in gate.stdout


OTHER_ORDERS = ORDER_CASES.replace("A1234", "A9999")
"""The shop's cases with another order number: the same ids, other content."""


def test_a_reference_recorded_on_other_cases_in_a_folder_of_the_same_name_is_refused(
    tmp_path: Path, cli: Cli
) -> None:
    official = shop_project(tmp_path / "official", 'cases = "evals/cases"\n')
    vendor = shop_project(tmp_path / "vendor", 'cases = "evals/cases"\n')
    (official / "evals" / "cases" / "orders.yaml").write_text(OTHER_ORDERS)
    for root in (official, vendor):
        ran = cli("run", "--mode", "record", "--target", "emulator", "--adapters", "openai-chat",
                  "--no-baseline", "--no-progress", cwd=root)  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
    against = official / "reports" / "results.jsonl"
    spec = f"openai-chat={_model(against, 'openai-chat')}"
    header = json.loads(against.read_text().splitlines()[0])
    assert header["config"]["case_set"] == "evals/cases", "the same folder name on both sides"

    compared = cli("compare", "reports/results.jsonl", "--reference", spec, "--against", str(against),
                   cwd=vendor)  # fmt: skip
    gated = cli("gate", "--reference", spec, "--against", str(against), cwd=vendor)

    for done in (compared, gated):
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert "ran different case sets: 1 of the 2 cases both ran differ in content (orders_simple_01)" in (
            done.stderr
        )
    own = cli("gate", "--no-baseline", cwd=vendor)
    assert own.returncode == 0, own.stdout + own.stderr
