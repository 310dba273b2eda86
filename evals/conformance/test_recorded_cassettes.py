"""The project's own cassettes replay exactly through today's adapter (requests and answers)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from xpeval.evals.cases import load_cases
from xpeval.evals.cassettes import CassetteStore
from xpeval.evals.running.drift import check_cassettes


def test_the_projects_cassettes_for_the_adapter_replay_exactly(
    adapter_id: str, cassette_store: CassetteStore, xpeval_case_dir: str | None
) -> None:
    if not cassette_store.models(adapter_id):
        pytest.skip(f"no cassettes for {adapter_id} under {cassette_store.root}")
    from pathlib import Path

    from xpeval.evals.cases.loader import BUILTIN_DIR

    cases = {
        item.case.id: item.case
        for item in load_cases(Path(xpeval_case_dir) if xpeval_case_dir else BUILTIN_DIR)
    }
    report = asyncio.run(check_cassettes(cassette_store, cases, adapters=[adapter_id], now=datetime.now(UTC)))
    # Coverage is not conformance: a case without a cassette is for `xpeval cassettes check`.
    problems = [p for finding in report.findings if finding.kind != "missing" for p in finding.problems]
    assert not problems, "\n".join(problems[:10])
