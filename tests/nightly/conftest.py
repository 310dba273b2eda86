"""Fixtures: a nightly whose providers and local servers are stand-ins, its files in tmp_path."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from tests.nightly._fake import PerfectModel
from xpeval.evals.nightly.run import NightlyConfig


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
    return NightlyConfig(
        cases=("weather_*",),
        categories=("simple",),
        cassettes=tmp_path / "nightly" / "cassettes",
        results=tmp_path / "nightly" / "results.jsonl",
        reports=tmp_path / "nightly",
        baseline=tmp_path / "baseline.json",
        history=tmp_path / "history",
        schemas=False,
        concurrency=8,
        root=REPO_ROOT,
    )


def with_(config: NightlyConfig, **changes: object) -> NightlyConfig:
    return replace(config, **changes)  # type: ignore[arg-type]
