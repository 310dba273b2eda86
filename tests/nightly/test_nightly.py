"""The nightly: one target per adapter (live where its key is set, the local model where it
serves), skips said with their reason, exit codes, comparisons with the last good nightly and
the gate's baseline by the gate's own paired test, the history appended."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nightly._fake import FakeServers, PerfectModel, set_keys
from tests.nightly.conftest import with_
from xpeval.evals.local_model.models import MODELS
from xpeval.evals.nightly.config import NightlyConfig
from xpeval.evals.nightly.outcome import EXIT_ALERTS, EXIT_NOTHING, EXIT_PASSED
from xpeval.evals.nightly.run import run_nightly
from xpeval.evals.results.history import load_history, runs
from xpeval.evals.results.load import load_run
from xpeval.evals.verdict.baseline import update

DEFAULT, SMALL = MODELS[0].alias, MODELS[1].alias


def test_without_keys_or_a_local_model_every_adapter_says_why_and_the_exit_is_3(
    config: NightlyConfig, model: PerfectModel
) -> None:
    outcome = run_nightly(config, servers=FakeServers())

    assert outcome.exit_code == EXIT_NOTHING and not outcome.passed
    reasons = {t.adapter: t.reason for t in outcome.plan.targets}
    assert all(t.skipped for t in outcome.plan.targets)
    assert (
        "OPENAI_API_KEY" in reasons["openai-chat"]
        and "no local model server is running" in reasons["openai-chat"]
    )
    assert (
        "GEMINI_API_KEY" in reasons["google-genai"]
        and "does not serve its wire (google-genai)" in reasons["google-genai"]
    )
    assert "AZURE_OPENAI_API_KEY + AZURE_OPENAI_ENDPOINT" in reasons["azure"]
    assert "URL shape" in reasons["azure"]
    summary = outcome.summary()
    assert "skipped:" in summary and summary.splitlines()[-1].startswith(
        "nightly: nothing to measure: FAILED"
    )
    assert model.requests == [] and not config.run.results.exists() and not config.history.exists()


def test_nothing_to_measure_passes_only_when_allowed(config: NightlyConfig, model: PerfectModel) -> None:
    outcome = run_nightly(with_(config, allow_nothing=True), servers=FakeServers())

    assert outcome.exit_code == EXIT_PASSED
    assert outcome.summary().splitlines()[-1].startswith("nightly: nothing to measure (allowed)")


def test_live_where_a_key_is_set_the_local_model_where_it_serves(
    config: NightlyConfig, model: PerfectModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, ["OPENAI_API_KEY"])
    servers = FakeServers(up={DEFAULT})
    chosen = with_(config, adapters=("openai-chat", "anthropic-messages", "google-genai"))

    outcome = run_nightly(chosen, servers=servers)

    kinds = {t.adapter: (t.kind, t.models) for t in outcome.plan.targets}
    assert kinds == {
        "openai-chat": ("provider", ("gpt-4.1-mini",)),
        "anthropic-messages": ("local-model", (DEFAULT,)),
        "google-genai": (None, ()),
    }
    assert outcome.exit_code == EXIT_PASSED, outcome.summary()
    frame = load_run(chosen.run.results).frame
    assert set(zip(frame["adapter"], frame["source"], frame["model"], strict=True)) == {
        ("openai-chat", "live", "gpt-4.1-mini"),
        ("anthropic-messages", "local-model", DEFAULT),
    }
    cassettes = chosen.run.cassettes
    recorded = sorted(p.relative_to(cassettes).parts[0] for p in cassettes.rglob("*.yaml"))
    assert recorded == ["anthropic-messages"] * 3 + ["openai-chat"] * 3, (
        "fresh cassettes in the nightly's folder"
    )
    summary = outcome.summary()
    assert "openai-chat: live provider" in summary and "(model gpt-4.1-mini)" in summary
    assert f"anthropic-messages: local model http://127.0.0.1:{MODELS[0].port} ({DEFAULT})" in summary
    assert "google-genai: no credentials (set GEMINI_API_KEY or GOOGLE_API_KEY)" in summary
    assert servers.started == [] and servers.stopped == [], "servers already running are used, never stopped"
    stored = runs(load_history(chosen.history))
    assert stored[["run", "kind", "passed"]].values.tolist() == [[outcome.run, "nightly", True]]
    assert (chosen.run.reports / "nightly.md").is_file()


def test_serve_local_starts_what_is_needed_and_stops_only_that(
    config: NightlyConfig, model: PerfectModel
) -> None:
    servers = FakeServers(up={SMALL}, installed={DEFAULT, SMALL})
    chosen = with_(config, adapters=("openai-compatible",), serve_local=True)

    outcome = run_nightly(chosen, servers=servers)

    assert outcome.exit_code == EXIT_PASSED, outcome.summary()
    assert servers.started == [DEFAULT] and servers.stopped == [DEFAULT]
    assert servers.up == {SMALL}, "the server that was already running keeps running"
    assert set(load_run(chosen.run.results).frame["model"]) == {DEFAULT, SMALL}
    assert f"local servers started for the run and stopped after: {DEFAULT}" in outcome.summary()


def test_a_local_adapter_without_a_server_is_skipped_with_how_to_get_one(
    config: NightlyConfig, model: PerfectModel
) -> None:
    chosen = with_(config, adapters=("openai-compatible",))
    plain = run_nightly(chosen, servers=FakeServers(installed={DEFAULT}))
    serving = run_nightly(with_(chosen, serve_local=True), servers=FakeServers())

    assert "xpeval local-model serve" in plain.plan.targets[0].reason
    assert "--serve-local" in plain.plan.targets[0].reason
    assert "cannot start a local server" in serving.plan.targets[0].reason
    assert "xpeval local-model install" in serving.plan.targets[0].reason
    assert plain.exit_code == serving.exit_code == EXIT_NOTHING


def test_a_dry_run_plans_and_sends_nothing(
    config: NightlyConfig, model: PerfectModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, ["ANTHROPIC_API_KEY"])
    servers = FakeServers(installed={DEFAULT})
    outcome = run_nightly(
        with_(config, adapters=("anthropic-messages", "openai-chat"), serve_local=True),
        servers=servers,
        dry_run=True,
    )

    assert [t.kind for t in outcome.plan.targets] == ["provider", "local-model"]
    assert outcome.plan.start == [DEFAULT] and servers.started == []
    assert outcome.exit_code == EXIT_PASSED and model.requests == [] and not config.run.results.exists()
    assert outcome.summary().splitlines()[-1] == "nightly (dry run): would measure 2 adapter(s), 0 skipped"


def _simple_cases() -> list[str]:
    from xpeval.evals.cases import load_cases

    return [item.case.id for item in load_cases() if item.case.category == "simple"]


def test_a_regression_against_the_last_good_nightly_is_an_alert_naming_what_flipped(
    config: NightlyConfig, model: PerfectModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"])
    nightly = with_(config, cases=(), adapters=("openai-chat", "anthropic-messages"))
    first = run_nightly(nightly, servers=FakeServers())
    assert first.exit_code == EXIT_PASSED, first.summary()

    flipped = _simple_cases()[:8]
    model.wrong = {f"api.openai.com/{case}" for case in flipped}
    second = run_nightly(nightly, servers=FakeServers())

    assert second.exit_code == EXIT_ALERTS
    against_last = [a for a in second.alerts if a.against == f"last good nightly {first.run}"]
    accuracy = next(a for a in against_last if a.metric == "accuracy")
    assert (accuracy.kind, accuracy.adapter, accuracy.model, accuracy.source) == (
        "regression",
        "openai-chat",
        "gpt-4.1-mini",
        "live",
    )
    assert sorted(accuracy.cases) == sorted(flipped)
    assert accuracy.change == f"100.0% (23/23) -> {15 / 23:.1%} (15/23) on 23 shared cases"
    assert "McNemar exact, Holm-adjusted p=" in accuracy.detail
    assert not [a for a in second.alerts if a.adapter == "anthropic-messages"]
    line = accuracy.line()
    assert line.startswith("REGRESSION openai-chat (gpt-4.1-mini, live) accuracy vs last good nightly")
    assert "flipped: 8 [" in line and flipped[0] in line
    assert second.summary().splitlines()[-1].startswith("nightly: FAILED")
    # The failed night is kept, and the next comparison is still with the last good one.
    stored = runs(load_history(nightly.history))
    assert stored["passed"].tolist() == [True, False]
    third = run_nightly(nightly, servers=FakeServers())
    assert any(a.against == f"last good nightly {first.run}" for a in third.alerts)


def test_a_live_row_is_compared_with_the_baselines_cassette_row_of_its_adapter_and_model(
    config: NightlyConfig, model: PerfectModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, ["OPENAI_API_KEY"])
    nightly = with_(config, cases=(), adapters=("openai-chat",))
    good = run_nightly(nightly, servers=FakeServers())
    recorded = load_run(nightly.run.results).frame.assign(source="cassette")
    baseline, _ = update(None, recorded, case_set="builtin", run="recorded", all_cases=True)
    baseline.write(nightly.run.baseline)  # type: ignore[arg-type]
    assert good.passed

    flipped = _simple_cases()[-8:]
    model.wrong = set(flipped)
    worse = run_nightly(
        with_(nightly, history=nightly.history.parent / "other-history"), servers=FakeServers()
    )

    against = [a for a in worse.alerts if a.against == f"baseline {nightly.run.baseline} (cassette row)"]
    assert {a.metric for a in against} >= {"accuracy", "tool_selection"}
    assert {a.source for a in against} == {"live"}
    assert all(sorted(a.cases) == sorted(flipped) for a in against if a.metric == "accuracy")
    assert worse.exit_code == EXIT_ALERTS


def test_the_command_prints_the_summary_and_exits_by_it(
    config: NightlyConfig,
    model: PerfectModel,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from xpeval.evals.cli import main

    monkeypatch.setattr("xpeval.evals.nightly.run.InstalledServers", FakeServers)
    summary_file = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    flags = [
        "--cases",
        "weather_*",
        "--categories",
        "simple",
        "--no-schemas",
        "--no-progress",
        "--reports",
        str(tmp_path / "r"),
        "--history",
        str(tmp_path / "h"),
        "--baseline",
        str(tmp_path / "none.json"),
    ]

    assert main(["nightly", "--adapters", "google-genai,azure", "--dry-run", *flags]) == EXIT_NOTHING
    assert "google-genai: no credentials" in capsys.readouterr().out
    assert main(["nightly", "--adapters", "google-genai", "--allow-nothing", *flags]) == EXIT_PASSED

    set_keys(monkeypatch, ["GEMINI_API_KEY"])
    assert main(["nightly", "--adapters", "google-genai", *flags]) == EXIT_PASSED
    out = capsys.readouterr().out
    assert "google-genai: live provider" in out and out.strip().endswith("nightly: passed")
    assert "## xpeval nightly: passed" in summary_file.read_text()
    assert (tmp_path / "r" / "results.jsonl").is_file() and (tmp_path / "r" / "cassettes").is_dir()
