"""Merging shards: the merged run is the unsharded run (same scorecard, same gate verdict), and
files that are not the complete shards of one run are refused in one line.

The shards are real `run --shard` files of the committed cassettes: every adapter and model, on
one category's cases. The unsharded run and its two shards cost a third of one whole replay
(on every case they cost two) and go through every wire, source and model all the same."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from xpeval.errors import UserError
from xpeval.evals.results.file import IncompleteRunError
from xpeval.evals.results.load import load_run
from xpeval.evals.results.merge import merge_shards
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.baseline import read_baseline
from xpeval.evals.verdict.custody import check_custody
from xpeval.evals.verdict.file_gate import scope_of
from xpeval.evals.verdict.gate import baseline_for_run, diff_text, evaluate
from xpeval.evals.verdict.scorecard import scorecard


def _run(
    tmp: Path,
    name: str,
    shard: str | None = None,
    adapters: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
) -> Path:
    results = tmp / f"{name}.jsonl"
    run_suite(
        SuiteConfig(
            results=results,
            reports=tmp / name,
            cassettes=REPO_ROOT / "cassettes",
            root=REPO_ROOT,
            shard=shard,
            adapters=adapters,
            categories=categories,
        )
    )
    return results


MERGED_CATEGORY = ("parallel_multiple",)
"""The committed cases every adapter's shards are cut from (several calls per case, both streamed
and plain recordings)."""


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A replay of the committed cassettes (every adapter, one category): unsharded, and as two
    shards merged."""
    tmp = tmp_path_factory.mktemp("replay")
    whole = _run(tmp, "whole", categories=MERGED_CATEGORY)
    shards = [_run(tmp, f"shard{i}", shard=f"{i}/2", categories=MERGED_CATEGORY) for i in (1, 2)]
    merged = tmp / "merged.jsonl"
    merge_shards(list(reversed(shards)), merged, vouch=check_custody, root=REPO_ROOT)
    return {"whole": whole, "merged": merged, "shard1": shards[0], "shard2": shards[1]}


def _card(path: Path) -> pd.DataFrame:
    return scorecard(load_run(path).frame)


@pytest.mark.slow
def test_two_merged_shards_of_a_committed_replay_score_as_the_unsharded_run(
    committed: dict[str, Path],
) -> None:
    whole, merged = load_run(committed["whole"]), load_run(committed["merged"])
    merged.check_complete()
    assert merged.header.plan is not None and merged.header.plan.shard is None
    assert merged.header.plan.keys() == whole.header.plan.keys()  # type: ignore[union-attr]
    assert merged.header.fingerprint == whole.header.fingerprint, (
        "the same configuration as the unsharded run"
    )
    assert scope_of(merged.header) == scope_of(whole.header)
    assert (
        len(merged.frame)
        == len(whole.frame)
        == len(load_run(committed["shard1"]).frame) + len(load_run(committed["shard2"]).frame)
    )
    assert set(merged.frame["run"]) == {merged.header.run}
    pd.testing.assert_frame_equal(_card(committed["merged"]), _card(committed["whole"]))

    baseline = read_baseline(REPO_ROOT / "reports" / "baseline.json")
    verdicts = []
    for run in (whole, merged):
        scope = scope_of(run.header)
        compared = baseline_for_run(baseline, scope)
        verdicts.append(diff_text(evaluate(run.frame, compared, scope)))
    assert verdicts[0] == verdicts[1]
    assert verdicts[0].endswith("gate: passed")


@pytest.mark.slow
def test_the_gate_judges_the_merged_run_as_it_judges_the_unsharded_run(
    committed: dict[str, Path], cli: Cli
) -> None:
    whole = cli("gate", "--results", str(committed["whole"]))
    merged = cli("gate", "--results", str(committed["merged"]))
    assert (merged.returncode, merged.stdout) == (whole.returncode, whole.stdout)
    assert whole.returncode == 0, whole.stdout + whole.stderr


@pytest.mark.slow
def test_one_shard_alone_does_not_pass_as_the_run(committed: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"missing shard\(s\) 2/2"):
        merge_shards([committed["shard1"]], tmp_path / "m.jsonl", vouch=check_custody, root=REPO_ROOT)
    assert not (tmp_path / "m.jsonl").exists()


# --- refusals (small runs: one adapter, the irrelevance cases) ---------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("small")
    mimo, irrelevance = ("mimo",), ("irrelevance",)
    return {
        "1/2": _run(tmp, "a1", "1/2", mimo, irrelevance),
        "2/2": _run(tmp, "a2", "2/2", mimo, irrelevance),
        "1/2 again": _run(tmp, "a1-again", "1/2", mimo, irrelevance),
        "other 2/2": _run(tmp, "b2", "2/2", mimo, ("irrelevance", "simple")),
        "1/3": _run(tmp, "c1", "1/3", mimo, irrelevance),
        "whole": _run(tmp, "whole", None, mimo, irrelevance),
    }


def test_small_shards_merge_into_the_whole_selection(small: dict[str, Path], tmp_path: Path) -> None:
    merged = merge_shards(
        [small["1/2"], small["2/2"]], tmp_path / "m.jsonl", vouch=check_custody, root=REPO_ROOT
    )
    whole = load_run(small["whole"])
    assert merged.episodes == len(whole.frame) == 14
    assert merged.header.config["some_cases"] is True, "a category selection stays a selection"
    assert merged.header.fingerprint == whole.header.fingerprint
    load_run(merged.path).check_complete()


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["1/2", "other 2/2"], "configurations differ in case_digests, cases"),
        (["1/2", "1/2 again", "2/2"], "shard 1/2 given twice"),
        (["1/2", "1/2"], "is given twice"),
        (["1/2", "1/3"], "split the run differently"),
        (["2/2"], r"missing shard\(s\) 1/2"),
        (["whole", "2/2"], "not a shard"),
    ],
)
def test_files_that_are_not_one_runs_shards_are_refused(
    small: dict[str, Path], tmp_path: Path, names: list[str], words: str
) -> None:
    with pytest.raises(UserError, match=words):
        merge_shards([small[n] for n in names], tmp_path / "m.jsonl", vouch=check_custody, root=REPO_ROOT)
    assert list(tmp_path.iterdir()) == []


def test_an_incomplete_shard_is_refused(small: dict[str, Path], tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    lines = small["2/2"].read_bytes().splitlines(keepends=True)
    cut.write_bytes(b"".join(lines[:-2]))  # no completion record, one episode short
    with pytest.raises(IncompleteRunError, match="did not finish"):
        merge_shards([small["1/2"], cut], tmp_path / "m.jsonl", vouch=check_custody, root=REPO_ROOT)


def test_an_episode_in_two_shards_is_refused(small: dict[str, Path], tmp_path: Path) -> None:
    lines = small["2/2"].read_text().splitlines(keepends=True)
    stolen = json.loads(small["1/2"].read_text().splitlines()[1])
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text("".join([*lines[:-1], json.dumps(stolen) + "\n", lines[-1]]))
    with pytest.raises(UserError, match=r"is in a1.jsonl and in doubled.jsonl"):
        merge_shards([small["1/2"], doubled], tmp_path / "m.jsonl", vouch=check_custody, root=REPO_ROOT)


def test_the_command_refuses_in_one_line_and_writes_nothing(
    small: dict[str, Path], tmp_path: Path, cli: Cli
) -> None:
    done = cli("merge", str(small["1/2"]), str(small["other 2/2"]), "--out", str(tmp_path / "m.jsonl"))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "differ" in lines[0], done.stderr
    assert not (tmp_path / "m.jsonl").exists()

    done = cli("merge", str(small["1/2"]), str(small["2/2"]), "--out", str(tmp_path / "m.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "merged 2 shards" in done.stderr
    gate = cli("gate", "--results", str(tmp_path / "m.jsonl"))
    assert gate.returncode == 0 and gate.stdout.strip().endswith("gate: passed"), gate.stdout + gate.stderr
