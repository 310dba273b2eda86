"""A results file is evidence, not a verdict: the gate scores every final row again from its calls
and its case, and refuses a file whose rows are not what they claim (exit 2, one line naming the
row) — a flipped `correct`, an extra final row, a completion record that miscounts, rows of
another run, a relabelled source; `xpeval merge` refuses such a shard the same way.

Each attack edits a real replay of the committed cassettes (one adapter, its two local models,
the simple cases), as someone with an editor or another CI job's shard would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from tests._corpus import REPO_ROOT
from xpeval.evals.cli import main
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.custody import MAX_RESCORED_CALLS

ADAPTER = "openai-compatible"
CATEGORY = ("simple",)
STRONGER = "qwen2.5-coder-1.5b-instruct"

Record = dict[str, Any]


def _replay(tmp: Path, name: str, shard: str | None = None) -> Path:
    results = tmp / f"{name}.jsonl"
    run_suite(
        SuiteConfig(
            results=results,
            reports=tmp / name,
            cassettes=REPO_ROOT / "cassettes",
            root=REPO_ROOT,
            adapters=(ADAPTER,),
            categories=CATEGORY,
            shard=shard,
        )
    )
    return results


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The replay, its baseline (written by the gate from it), and the replay cut in two shards."""
    tmp = tmp_path_factory.mktemp("custody")
    results = _replay(tmp, "run")
    baseline = tmp / "baseline.json"
    assert main(["gate", "--results", str(results), "--baseline", str(baseline), "--update-baseline"]) == 0
    return {
        "run": results,
        "baseline": baseline,
        "1/2": _replay(tmp, "shard1", "1/2"),
        "2/2": _replay(tmp, "shard2", "2/2"),
    }


def _records(path: Path) -> list[Record]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _edited(source: Path, out: Path, edit: Callable[[list[Record]], object]) -> Path:
    records = _records(source)
    edit(records)
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    return out


def _rows(records: list[Record]) -> list[Record]:
    return [r for r in records if r["type"] == "result"]


def _name(row: Record) -> str:
    return f"{row['case_id']}/{row['adapter']}/{row['model']}"


def _refused(ran: Any, *words: str) -> str:
    """The one line a refused file prints (exit 2, no verdict, no traceback)."""
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "gate: passed" not in ran.stdout and "Traceback" not in ran.stderr
    lines = [line for line in ran.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, ran.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _gate(cli: Cli, results: Path, baseline: Path, *extra: str) -> Any:
    return cli("gate", "--results", str(results), "--baseline", str(baseline), *extra)


def test_the_honest_replay_passes_its_gate(honest: dict[str, Path], cli: Cli) -> None:
    ran = _gate(cli, honest["run"], honest["baseline"])
    assert ran.returncode == 0 and ran.stdout.strip().endswith("gate: passed"), ran.stdout + ran.stderr


def _regress(records: list[Record], *, flip_back: bool) -> list[str]:
    """The stronger model makes no call on six cases it answered right; `flip_back`: its rows
    still say what they said before (`correct` true), as an editor would leave them."""
    hit = [r for r in _rows(records) if r["model"] == STRONGER and r["correct"]][:6]
    assert len(hit) == 6
    for row in hit:
        row["calls"] = []
        if not flip_back:
            row.update(
                correct=False,
                tool_selection_correct=False,
                arguments_correct=None,
                schema_valid=None,
                reason="expected 1 call(s), got none",
            )
    return [_name(r) for r in hit]


def test_a_regressed_run_whose_correct_was_flipped_back_is_refused_naming_the_row(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    regressed = _edited(honest["run"], tmp_path / "regressed.jsonl", lambda r: _regress(r, flip_back=False))
    worse = _gate(cli, regressed, honest["baseline"], "--tolerance", "0.05")
    assert worse.returncode == 1, worse.stdout + worse.stderr  # the run did regress

    names: list[str] = []
    flipped = _edited(
        honest["run"], tmp_path / "flipped.jsonl", lambda r: names.extend(_regress(r, flip_back=True))
    )
    line = _refused(_gate(cli, flipped, honest["baseline"], "--tolerance", "0.05"), names[0])
    assert "says correct=true" in line and "score correct=false" in line and "got none" in line


def test_a_second_final_row_for_one_episode_is_refused(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    def extra(records: list[Record]) -> None:
        wrong = next(r for r in _rows(records) if r["correct"] is False)
        records.insert(-1, {**wrong})
        records[-1]["rows"] += 1  # the completion record counts it: only the extra row is wrong

    path = _edited(honest["run"], tmp_path / "extra.jsonl", extra)
    wrong = next(r for r in _rows(_records(path)) if r["correct"] is False)
    _refused(_gate(cli, path, honest["baseline"]), _name(wrong), "more than one final row")


def test_a_completion_record_that_miscounts_the_rows_is_refused(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    def miscount(records: list[Record]) -> None:
        records[-1]["rows"] = 212

    path = _edited(honest["run"], tmp_path / "miscounted.jsonl", miscount)
    held = len(_rows(_records(path)))
    _refused(_gate(cli, path, honest["baseline"]), "counts 212 result rows", f"holds {held}")


def test_a_row_of_another_run_spliced_in_is_refused(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    other = _records(honest["1/2"])[1]  # the same episode, played by another run (a shard)

    def splice(records: list[Record]) -> None:
        at = next(i for i, r in enumerate(records) if r["type"] == "result" and _name(r) == _name(other))
        records[at] = other

    path = _edited(honest["run"], tmp_path / "spliced.jsonl", splice)
    _refused(_gate(cli, path, honest["baseline"]), _name(other), other["run"], "another run")


def test_a_relabelled_source_in_a_replay_is_refused(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    def relabel(records: list[Record]) -> None:
        for row in _rows(records):
            if row["model"] == STRONGER:
                row["source"] = "cassette"  # the whole row now "not compared" with its baseline

    path = _edited(honest["run"], tmp_path / "relabelled.jsonl", relabel)
    _refused(_gate(cli, path, honest["baseline"]), STRONGER, "source 'cassette'", "'local-model'")


def test_a_cut_note_on_an_argument_that_was_not_cut_is_refused(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    """A row that says its arguments were cut has calls that cannot be judged against their schema:
    its stored `schema_valid` true is not what its calls score."""
    names: list[str] = []

    def cut(records: list[Record]) -> None:
        row = next(r for r in _rows(records) if r["correct"] and r["calls"])
        argument = next(iter(row["calls"][0]["arguments"]))
        row["truncated"] = [{"field": f"calls[0].arguments.{argument}", "bytes": 5000, "sha256": "0" * 64}]
        names.append(_name(row))

    path = _edited(honest["run"], tmp_path / "cut.jsonl", cut)
    _refused(_gate(cli, path, honest["baseline"]), names[0], "says schema_valid=true", "schema_valid=null")


def test_a_row_with_more_calls_than_the_gate_scores_again_is_refused(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    names: list[str] = []

    def flood(records: list[Record]) -> None:
        row = next(r for r in _rows(records) if r["correct"] and r["calls"])
        row["calls"] = row["calls"] * (MAX_RESCORED_CALLS + 1)
        names.append(_name(row))

    path = _edited(honest["run"], tmp_path / "flood.jsonl", flood)
    _refused(
        _gate(cli, path, honest["baseline"]),
        names[0],
        f"{MAX_RESCORED_CALLS + 1} calls",
        f"at most {MAX_RESCORED_CALLS}",
    )


def test_merge_refuses_a_shard_with_an_extra_final_row_and_writes_nothing(
    honest: dict[str, Path], cli: Cli, tmp_path: Path
) -> None:
    def extra(records: list[Record]) -> None:
        records.insert(-1, {**_rows(records)[0]})
        records[-1]["rows"] += 1

    shard = _edited(honest["2/2"], tmp_path / "shard2.jsonl", extra)
    out = tmp_path / "merged.jsonl"
    ran = cli("merge", str(honest["1/2"]), str(shard), "--out", str(out))
    _refused(ran, "shard2.jsonl", _name(_rows(_records(shard))[0]), "more than one final row")
    assert not out.exists()

    merged = cli("merge", str(honest["1/2"]), str(honest["2/2"]), "--out", str(out))
    assert merged.returncode == 0, merged.stderr
    assert _gate(cli, out, honest["baseline"]).returncode == 0


VERDICT = ("correct", "tool_selection_correct", "arguments_correct", "schema_valid", "reason")


@pytest.mark.parametrize("honest_verdict", [True, False])
def test_a_repeated_answer_is_scored_once_and_each_row_that_repeats_it_is_still_judged(
    honest: dict[str, Path], cli: Cli, tmp_path: Path, honest_verdict: bool
) -> None:
    """Trials with the same answer share one scoring (the gate over a million rows, benchmarks/
    results_at_scale.py); every row's stored verdict is still compared with that score."""
    names: list[str] = []

    def repeat(records: list[Record]) -> None:
        rows = _rows(records)
        first = next(r for r in rows if r["model"] == STRONGER and r["correct"])
        other = next(r for r in rows if r["case_id"] == first["case_id"] and r["model"] != STRONGER)
        other["calls"] = [dict(call) for call in first["calls"]]
        other.update({k: first[k] for k in VERDICT})
        if not honest_verdict:
            other.update(correct=False, reason="edited")
        names.append(_name(other))

    edited = _edited(honest["run"], tmp_path / "repeated.jsonl", repeat)
    ran = _gate(cli, edited, honest["baseline"], "--tolerance", "1")
    if honest_verdict:
        assert ran.returncode in (0, 1) and "not evidence" not in ran.stderr, ran.stdout + ran.stderr
    else:
        line = _refused(ran, names[0])
        assert "says correct=false" in line and "score correct=true" in line
