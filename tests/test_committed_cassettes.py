"""The main job on this checkout: `xpeval run` replays every committed cassette, offline.

Run once per session (`committed_replay`, tests/conftest.py), then checked per registered
adapter: the requests each adapter builds today match what was recorded (method, path,
canonical body), every recorded interaction is used, every built-in case has a cassette, the
scorecard has a row per adapter naming its source, and the gate passes against the committed
baseline. Emulated recordings hold a perfect model's answers, so an emulated episode that does
not score as correct is a pipeline bug (unless the adapter itself refused the case's tools,
which replays as the same refusal)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from tests._replay import REPLAY_TIMEOUT, CommittedReplay
from xpeval.evals.cases import load_cases
from xpeval.evals.cassettes import CassetteStore
from xpeval.evals.results.file import ResultsFile

CASES = [loaded.case for loaded in load_cases()]


def test_every_adapter_has_a_cassette_for_every_built_in_case(xpeval_adapter_id: str) -> None:
    store = CassetteStore(REPO_ROOT / "cassettes")
    models = store.models(xpeval_adapter_id)
    assert models, f"{xpeval_adapter_id}: no cassettes; record with: xpeval run --mode record"
    for model in models:
        missing = [case.id for case in CASES if not store.path(xpeval_adapter_id, case.id, model).exists()]
        assert not missing, f"{xpeval_adapter_id}/{model}: no cassette for {missing[:5]}"
        for case in CASES:
            meta = store.meta(store.path(xpeval_adapter_id, case.id, model))
            assert meta is not None and meta.source in ("live", "local-model", "emulated")
            assert (meta.adapter, meta.case, meta.model) == (xpeval_adapter_id, case.id, model)


@pytest.mark.slow
@pytest.mark.timeout(REPLAY_TIMEOUT)
def test_the_main_job_passes_its_gate_offline(committed_replay: CommittedReplay) -> None:
    ran = committed_replay.ran
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "gate: passed" in ran.stdout


@pytest.mark.slow
@pytest.mark.timeout(REPLAY_TIMEOUT)
def test_replay_is_conformant_for(xpeval_adapter_id: str, committed_replay: CommittedReplay) -> None:
    rows = [row for row in committed_replay.rows if row.adapter == xpeval_adapter_id]
    models = CassetteStore(REPO_ROOT / "cassettes").models(xpeval_adapter_id)
    assert len(rows) == len(CASES) * len(models)
    broken = [f"{row.case_id}: {row.reason}" for row in rows if row.error_kind in ("cassette", "runner")]
    assert not broken, "\n".join(broken[:5])
    emulated_wrong = [
        f"{row.case_id}: {row.reason}"
        for row in rows
        if row.source == "emulated" and not row.correct and row.error_kind != "refused"
    ]
    assert not emulated_wrong, "\n".join(emulated_wrong[:5])


@pytest.mark.slow
@pytest.mark.timeout(REPLAY_TIMEOUT)
def test_the_scorecard_has_a_row_naming_its_source_for(
    xpeval_adapter_id: str, committed_replay: CommittedReplay
) -> None:
    card = pd.read_csv(committed_replay.reports / "scorecard.csv")
    sources = set(card.loc[card["adapter"] == xpeval_adapter_id, "source"])
    assert sources and sources <= {"cassette", "local-model", "emulated"}
    markdown = (committed_replay.reports / "scorecard.md").read_text()
    assert any(xpeval_adapter_id in line and line.startswith("| ") for line in markdown.splitlines())
    assert (committed_replay.reports / "schema_acceptance.md").exists()


@pytest.mark.slow
def test_a_run_of_one_adapter_or_some_cases_passes_its_gate(tmp_path: Path, cli: Cli) -> None:
    def run(*selection: str) -> tuple[int, str]:
        results, reports = str(tmp_path / f"{len(selection)}.jsonl"), str(tmp_path / "reports")
        ran = cli("run", "--no-progress", *selection, "--results", results, "--reports", reports)
        return ran.returncode, ran.stdout

    code, printed = run("--adapters", "moonshot")
    assert code == 0 and "gate: passed" in printed, printed[-2000:]
    code, printed = run("--adapters", "moonshot", "--categories", "parallel")
    assert code == 0, printed[-2000:]
    assert "conformance only" not in printed, "a run of some cases is compared on those cases"
    for results in ("2.jsonl", "4.jsonl"):  # `xpeval gate` on the same results gives the same verdict
        gate = cli("gate", "--results", str(tmp_path / results))
        assert gate.returncode == 0, gate.stdout[-2000:]


@pytest.mark.slow
@pytest.mark.timeout(REPLAY_TIMEOUT)
def test_the_columnar_reader_gives_the_same_scorecard_and_verdicts_as_the_row_reader(
    committed_replay: CommittedReplay,
) -> None:
    from xpeval.evals.results.load import load_run
    from xpeval.evals.verdict.baseline import codes_by_row, read_baseline
    from xpeval.evals.verdict.gate import RunScope, evaluate
    from xpeval.evals.verdict.scorecard import results_frame, scorecard

    path = committed_replay.results
    by_rows = results_frame(ResultsFile.read(path).rows)
    columnar = load_run(path).frame
    assert (
        len(columnar)
        == len(by_rows)
        == len(CASES)
        * sum(
            len(CassetteStore(REPO_ROOT / "cassettes").models(a))
            for a in {r.adapter for r in committed_replay.rows}
        )
    )
    old, new = scorecard(by_rows), scorecard(columnar)
    pd.testing.assert_frame_equal(old.reset_index(drop=True), new.reset_index(drop=True), check_dtype=False)
    assert codes_by_row(by_rows) == codes_by_row(columnar)
    baseline = read_baseline(REPO_ROOT / "reports" / "baseline.json")
    scope = RunScope(adapters=frozenset(columnar["adapter"]), case_set="builtin")
    old_report, new_report = evaluate(by_rows, baseline, scope), evaluate(columnar, baseline, scope)
    assert [(f.key, f.metric, f.ok) for f in old_report.findings] == [
        (f.key, f.metric, f.ok) for f in new_report.findings
    ]


@pytest.mark.slow
@pytest.mark.timeout(REPLAY_TIMEOUT)
def test_the_committed_run_reproduces_its_baseline_case_by_case(committed_replay: CommittedReplay) -> None:
    """Replay is deterministic: the scorecard of the committed run is exactly the committed
    baseline's, every row and every case (a refactoring that changes one verdict shows here)."""
    from xpeval.evals.results.load import load_run
    from xpeval.evals.verdict.baseline import read_baseline, update

    committed = read_baseline(REPO_ROOT / "reports" / "baseline.json")
    replayed, _ = update(
        None,
        load_run(committed_replay.results).frame,
        case_set="builtin",
        run="replay",
        all_cases=True,
    )
    assert replayed.rows == committed.rows
