"""Two vendors of the local 1.5B, recorded on the same cases (docs/reference-runs.md, "Two vendors
of one model"): the recordings replay offline, the verifier tells the vendors apart, and the
README's vendor table is what `xpeval compare` prints from them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests._cli import Ran, in_process
from tests._corpus import REPO_ROOT
from xpeval.evals.cassettes import CassetteStore
from xpeval.evals.local_model.models import QWEN_CODER_1_5B, QWEN_CODER_1_5B_GGUF_TEMPLATE

VENDORS = REPO_ROOT / "vendors"
ADAPTER = "openai-compatible"
REFERENCE = f"{ADAPTER}={QWEN_CODER_1_5B.alias}"
CASES = (VENDORS / "cases.txt").read_text(encoding="utf-8").strip()


def test_both_vendors_are_recorded_on_the_listed_cases_and_nothing_else() -> None:
    store = CassetteStore(VENDORS / "cassettes")
    models = store.models(ADAPTER)
    assert models == sorted([QWEN_CODER_1_5B.alias, QWEN_CODER_1_5B_GGUF_TEMPLATE.alias])
    listed = set(CASES.split(","))
    for model in models:
        recorded = {p.stem for p in store.path(ADAPTER, "x", model).parent.glob("*.yaml")}
        assert recorded == listed, model
        for case in sorted(listed):
            meta = store.meta(store.path(ADAPTER, case, model))
            assert meta is not None and meta.source == "local-model"
            assert (meta.adapter, meta.case, meta.model) == (ADAPTER, case, model)


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ran, Path]:
    """The vendors' replay and `xpeval compare` of it, in this process: what is read is the exit
    status, the table printed and the files written."""
    out = tmp_path_factory.mktemp("vendors")
    ran = in_process(
        "run",
        "--cassettes",
        str(VENDORS / "cassettes"),
        "--adapters",
        ADAPTER,
        "--cases",
        CASES,
        "--no-baseline",
        "--no-progress",
        "--results",
        str(out / "results.jsonl"),
        "--reports",
        str(out),
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "gate: passed" in ran.stdout
    return in_process("compare", str(out / "results.jsonl"), "--reference", REFERENCE, "--out", str(out)), out


@pytest.mark.slow
def test_the_vendor_with_the_gguf_template_fails_against_the_reference(
    compared: tuple[Ran, Path],
) -> None:
    done, out = compared
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    row = pd.read_csv(out / "compare.csv").set_index("model").loc[QWEN_CODER_1_5B_GGUF_TEMPLATE.alias]
    assert not row["passed"] and row["p_trigger"] < 0.05
    assert row["recall"] < 0.5 and "calls a tool less often" in row["failures"]


@pytest.mark.slow
def test_the_readme_shows_the_table_compare_prints(
    compared: tuple[Ran, Path],
) -> None:
    done, _ = compared
    rows = [line for line in done.stdout.splitlines() if line.startswith("| local-model |")]
    assert rows
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert [row for row in rows if row not in readme] == []
