"""Fixtures: a nightly whose providers and local servers are stand-ins, its files in tmp_path."""

from __future__ import annotations

import itertools
from dataclasses import fields, replace
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from tests.nightly._fake import PerfectModel
from xpeval.evals.nightly.config import NightlyConfig, nightly_run_settings
from xpeval.evals.running.suite import SuiteConfig


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> PerfectModel:
    """Every live and local-model request of the suite goes to an in-memory perfect model; the
    real local servers (their PID files, their ports) are never consulted."""
    fake = PerfectModel()
    monkeypatch.setattr("xpeval.evals.running.targets.upstream_pool", fake.transport)
    # A run's id is its start second and its configuration's fingerprint: nightlies of one
    # configuration run back to back here would share an id (one history file), so each gets
    # its own minute.
    minutes = itertools.count()
    monkeypatch.setattr(
        "xpeval.evals.running.suite.now_iso", lambda: f"2026-12-01T03:{next(minutes) % 60:02d}:00+00:00"
    )
    monkeypatch.setenv("XPEVAL_LOCAL_MODEL_DIR", str(tmp_path / "local-model"))
    return fake


@pytest.fixture
def config(tmp_path: Path) -> NightlyConfig:
    """A small nightly: the simple weather cases, every file under tmp_path, no baseline yet."""
    run = nightly_run_settings(
        tmp_path / "nightly",
        cases=("weather_*",),
        categories=("simple",),
        baseline=tmp_path / "baseline.json",
        concurrency=8,
        root=REPO_ROOT,
    )
    return NightlyConfig(run=run, history=tmp_path / "history", schemas=False)


RUN_SETTINGS = {f.name for f in fields(SuiteConfig)} - {f.name for f in fields(NightlyConfig)}


def with_(config: NightlyConfig, **changes: object) -> NightlyConfig:
    """`config` with `changes`; a run setting (cases, categories, ...) changes its `run`."""
    run = {k: v for k, v in changes.items() if k in RUN_SETTINGS}
    own = {k: v for k, v in changes.items() if k not in RUN_SETTINGS}
    return replace(config, run=replace(config.run, **run), **own)  # type: ignore[arg-type]
