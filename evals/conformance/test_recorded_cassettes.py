"""The project's own cassettes replay exactly through today's adapter (requests and answers)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from xpeval.evals.cases import load_cases
from xpeval.evals.cassettes import CassetteStore
from xpeval.evals.running.drift import check_cassettes


def test_the_projects_cassettes_for_the_adapter_replay_exactly(
    xpeval_adapter_id: str, xpeval_cassette_store: CassetteStore, xpeval_case_dir: str | None
) -> None:
    if not xpeval_cassette_store.models(xpeval_adapter_id):
        pytest.skip(f"no cassettes for {xpeval_adapter_id} under {xpeval_cassette_store.root}")
    from pathlib import Path

    from xpeval.evals.cases.loader import BUILTIN_DIR

    cases = {
        item.case.id: item.case
        for item in load_cases(Path(xpeval_case_dir) if xpeval_case_dir else BUILTIN_DIR)
    }
    report = asyncio.run(
        check_cassettes(xpeval_cassette_store, cases, adapters=[xpeval_adapter_id], now=datetime.now(UTC))
    )
    # Coverage is not conformance: a case without a cassette is for `xpeval cassettes check`.
    problems = [p for finding in report.findings if finding.kind != "missing" for p in finding.problems]
    assert not problems, "\n".join(problems[:10])
