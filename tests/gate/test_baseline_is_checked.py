"""The gate compares a run with a baseline it could read and check, or says it compared none.

A baseline that is missing, unreadable, of the wrong shape, of another case set or without a
row of the run is an input error (exit 2, one line naming the file), never a pass "on
conformance only"; `--no-baseline` asks for that explicitly and the verdict line says so. A
baseline is written only from a run the gate passes, unless the regressions are accepted by
name. The run judged is the committed replay (real rows with their calls), made to regress by
a baseline that remembers its failing cases as passing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from tests._replay import REPLAY_TIMEOUT, CommittedReplay
from xpeval.evals.cases.loader import BUILTIN_DIR

pytestmark = pytest.mark.timeout(REPLAY_TIMEOUT)


def good_baseline(cli: Cli, replay: CommittedReplay, path: Path) -> dict[str, object]:
    """The baseline of the committed replay itself, written by the gate."""
    written = cli("gate", "--results", str(replay.results), "--baseline", str(path), "--update-baseline")
    assert written.returncode == 0, written.stderr
    document: dict[str, object] = json.loads(path.read_text())
    return document


def regressed_baseline(cli: Cli, replay: CommittedReplay, path: Path) -> list[str]:
    """A baseline in which every case a recorded (non-emulated) row fails was passing: against
    it, the committed replay lost those cases. Returns them as `row case`."""
    document = good_baseline(cli, replay, path)
    rows = document["rows"]
    assert isinstance(rows, dict)
    lost = []
    for key, row in rows.items():
        if key.startswith("emulated|"):
            continue
        for case, code in row["cases"].items():
            if code[0] == "n" and code[5] == "n":  # wrong, and not an error: a measured miss
                row["cases"][case] = "y" + code[1:]
                lost.append(f"{key} accuracy: {case}")
    assert lost, "the committed replay has recorded rows that miss some cases"
    path.write_text(json.dumps(document))
    return lost


def one_line_refusal(ran: object, *needles: str) -> None:
    assert getattr(ran, "returncode", None) == 2, ran
    err = str(getattr(ran, "stderr", ""))
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


BAD_BASELINES = {
    "empty": "",
    "whitespace": "  \n",
    "not json": "{nope",
    "an object without rows": "{}",
    "rows an empty object": '{"version": 3, "case_set": "builtin", "rows": {}}',
    "rows null": '{"version": 3, "case_set": "builtin", "rows": null}',
    "rows a list": '{"version": 3, "case_set": "builtin", "rows": [1]}',
    "rows a string": '{"version": 3, "case_set": "builtin", "rows": "all good"}',
    "a list": "[1]",
    "a string": '"baseline"',
    "null": "null",
    "nested past the stack": "[" * 100_000 + "]" * 100_000,
    "a row without cases": '{"version": 3, "case_set": "builtin", "rows": {"cassette|openai-chat|m": {}}}',
    "no case set": '{"version": 3, "rows": {"cassette|openai-chat|m": {"cases": {"c": "yyy-nny"}}}}',
    "an unknown version": '{"version": 99, "case_set": "builtin", "rows": {}}',
}


@pytest.mark.parametrize("text", BAD_BASELINES.values(), ids=BAD_BASELINES.keys())
def test_a_baseline_of_the_wrong_shape_is_an_input_error_naming_it(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path, text: str
) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text)
    one_line_refusal(
        cli("gate", "--results", str(committed_replay.results), "--baseline", str(path)), str(path)
    )


def test_a_missing_baseline_is_an_input_error_that_says_how_to_write_one(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    typo = tmp_path / "baselin.json"
    ran = cli("gate", "--results", str(committed_replay.results), "--baseline", str(typo))
    one_line_refusal(ran, str(typo), "does not exist", "--update-baseline", "--no-baseline")


def test_a_folder_given_as_the_baseline_is_an_input_error(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    ran = cli("gate", "--results", str(committed_replay.results), "--baseline", str(tmp_path))
    one_line_refusal(ran, "is a folder")


def test_a_deleted_default_baseline_is_an_input_error_not_a_conformance_only_pass(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "reports").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "host"\n')
    (project / "cassettes").symlink_to(REPO_ROOT / "cassettes")  # what vouches for the replay's rows
    ran = cli("gate", "--results", str(committed_replay.results), cwd=project)
    one_line_refusal(ran, str(Path("reports") / "baseline.json"), "does not exist")


def test_a_baseline_of_another_case_set_is_an_input_error(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    document = good_baseline(cli, committed_replay, path)
    path.write_text(json.dumps({**document, "case_set": "evals/other-cases"}))
    ran = cli("gate", "--results", str(committed_replay.results), "--baseline", str(path))
    one_line_refusal(ran, "'evals/other-cases'", "'builtin'")


def test_a_results_header_whose_case_set_has_no_baseline_is_an_input_error(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    lines = committed_replay.results.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["config"]["cassettes"] = str(REPO_ROOT / "cassettes")
    # The built-in cases, as the project's own folder (the case set is the project's, never the
    # header's: the header's cases are the same content).
    shutil.copytree(BUILTIN_DIR, tmp_path / "evals" / "cases")
    (tmp_path / "pyproject.toml").write_text('[tool.xpeval]\ncases = "evals/cases"\n')
    moved = tmp_path / "results.jsonl"
    moved.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    ran = cli("gate", "--results", str(moved), cwd=tmp_path)
    one_line_refusal(ran, str(Path("evals") / "cases" / "baseline.json"), "does not exist")


def test_a_baseline_without_a_row_of_the_run_is_an_input_error(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    document = good_baseline(cli, committed_replay, path)
    rows = document["rows"]
    assert isinstance(rows, dict)
    path.write_text(
        json.dumps({**document, "rows": {"cassette|no-such-adapter|m": next(iter(rows.values()))}})
    )
    ran = cli("gate", "--results", str(committed_replay.results), "--baseline", str(path))
    one_line_refusal(ran, "no row of this run")


def test_no_baseline_gates_on_conformance_only_and_the_verdict_line_says_so(
    cli: Cli, committed_replay: CommittedReplay
) -> None:
    ran = cli("gate", "--results", str(committed_replay.results), "--no-baseline")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        ran.stdout.rstrip().splitlines()[-1]
        == "gate: passed (conformance only: no baseline compared, --no-baseline)"
    )


def test_a_regressed_run_fails_against_its_baseline(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    regressed_baseline(cli, committed_replay, path)
    ran = cli(
        "gate", "--results", str(committed_replay.results), "--baseline", str(path), "--tolerance", "0.001"
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stdout.rstrip().splitlines()[-1].startswith("gate: FAILED")


def test_update_baseline_refuses_a_run_the_gate_fails(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    regressed_baseline(cli, committed_replay, path)
    before = path.read_text()
    args = (
        "gate",
        "--results",
        str(committed_replay.results),
        "--baseline",
        str(path),
        "--tolerance",
        "0.001",
    )
    ran = cli(*args, "--update-baseline")
    one_line_refusal(ran, "not writing a baseline from a run the gate fails", "--accept-regressions")
    assert path.read_text() == before, "the baseline is left as it was"


def test_accept_regressions_writes_the_baseline_and_prints_every_flipped_case_it_accepts(
    cli: Cli, committed_replay: CommittedReplay, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.json"
    lost = regressed_baseline(cli, committed_replay, path)
    args = (
        "gate",
        "--results",
        str(committed_replay.results),
        "--baseline",
        str(path),
        "--tolerance",
        "0.001",
    )
    ran = cli(*args, "--update-baseline", "--accept-regressions")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    accepted = {
        line.removeprefix("accepting ") for line in ran.stdout.splitlines() if line.startswith("accepting ")
    }
    assert set(lost) <= accepted
    assert cli(*args).returncode == 0, "the accepted run is the new baseline"


def test_accept_regressions_without_update_baseline_is_a_usage_error(
    cli: Cli, committed_replay: CommittedReplay
) -> None:
    one_line_refusal(
        cli("gate", "--results", str(committed_replay.results), "--accept-regressions"), "--update-baseline"
    )


def test_a_replay_without_its_baseline_is_an_input_error_and_a_first_recording_says_how_to_write_one(
    cli: Cli, tmp_path: Path
) -> None:
    common = ("--adapters", "openai-chat", "--categories", "irrelevance", "--no-progress")
    files = ("--cassettes", str(tmp_path / "c"), "--reports", str(tmp_path / "r"))
    missing = ("--baseline", str(tmp_path / "baseline.json"))
    recorded = cli(
        "run",
        "--mode",
        "record",
        "--target",
        "emulator",
        *common,
        *files,
        *missing,
        "--results",
        str(tmp_path / "rec.jsonl"),
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "gate: passed (conformance only" in recorded.stdout
    assert "xpeval gate --update-baseline" in recorded.stdout, "a first run says how to write a baseline"
    replayed = cli("run", *common, *files, *missing, "--results", str(tmp_path / "rep.jsonl"))
    one_line_refusal(replayed, "does not exist", "--no-baseline")
