"""The example workflows parse, run the nox sessions they name, and keep their matrix, artifacts
and secrets consistent with the code (the shard count, the providers' key variables)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests._corpus import REPO_ROOT
from xpeval.adapters.registry import providers

WORKFLOWS = REPO_ROOT / ".github" / "workflows"


def _load(name: str) -> dict[str, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    # YAML 1.1 reads the bare key `on` as a boolean: GitHub reads it as the trigger.
    if True in document:
        document["on"] = document.pop(True)
    return document


def _runs(job: dict[str, Any]) -> list[str]:
    return [str(step["run"]) for step in job["steps"] if "run" in step]


def _uses(job: dict[str, Any]) -> list[str]:
    return [str(step["uses"]) for step in job["steps"] if "uses" in step]


@pytest.mark.parametrize("name", ["conformance.yml", "nightly.yml"])
def test_the_workflow_parses_with_jobs_and_pinned_actions(name: str) -> None:
    document = _load(name)
    assert document["on"] and document["jobs"]
    for job in document["jobs"].values():
        assert job["runs-on"] and job["steps"]
        assert all(re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", uses) for uses in _uses(job))


def test_conformance_shards_merge_and_gate() -> None:
    jobs = _load("conformance.yml")["jobs"]
    shard, gate = jobs["shard"], jobs["gate"]
    shards = shard["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    assert any(
        f"nox -s conformance -- --shard ${{{{ matrix.shard }}}}/{len(shards)}" in run for run in _runs(shard)
    )
    assert gate["needs"] == "shard" and "cancelled()" in gate["if"]
    assert "nox -s conformance -- merge" in _runs(gate)
    downloads = [s for s in gate["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact")]
    assert downloads[0]["with"]["path"] == "reports/shards" and downloads[0]["with"]["merge-multiple"] is True
    uploads = [s for s in gate["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert "reports/gate.xml" in uploads[0]["with"]["path"]


def test_nightly_is_scheduled_keeps_its_history_and_uploads_its_reports() -> None:
    document = _load("nightly.yml")
    assert document["on"]["schedule"][0]["cron"]
    job = document["jobs"]["nightly"]
    assert "nox -s nightly" in _runs(job)
    restore = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache/restore"))
    save = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/cache/save"))
    assert restore["with"]["path"] == save["with"]["path"] == "reports/history"
    assert restore["with"]["restore-keys"] and "cancelled()" in save["if"]
    upload = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert "reports/nightly/" in upload["with"]["path"] and "reports/history/" in upload["with"]["path"]


def test_the_nightly_gets_every_providers_key_from_secrets() -> None:
    env = _load("nightly.yml")["jobs"]["nightly"]["env"]
    wanted = {var for provider in providers() for var in provider.key_vars}
    wanted |= {
        provider.base_url_var
        for provider in providers()
        if provider.base_url_var
        and any(provider.base_url_var in group for group in provider.ready_when or ())
    }
    missing = sorted(var for var in wanted if env.get(var) != f"${{{{ secrets.{var} }}}}")
    assert missing == [], f"nightly.yml does not pass these from secrets: {missing}"


def test_the_sessions_the_workflows_run_exist() -> None:
    noxfile = (REPO_ROOT / "noxfile.py").read_text(encoding="utf-8")
    for session in ("conformance", "nightly"):
        assert re.search(rf"^def {session}\(session: nox\.Session\)", noxfile, re.MULTILINE)


def test_the_docs_explain_the_workflows() -> None:
    text = Path(REPO_ROOT / "docs" / "nightly.md").read_text(encoding="utf-8")
    for name in ("conformance.yml", "nightly.yml", "xpeval merge", "--serve-local", "Parquet"):
        assert name in text
