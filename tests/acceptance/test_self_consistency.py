"""Every adapter's pass output satisfies that adapter's own checker mode, or the tool is refused:
over ../shared/corpus/schemas (the generated schemas are tests/schema/test_pass_properties.py's)."""

from __future__ import annotations

import pytest

from tests._walle import corpus_schemas
from xpeval.adapters.contract import ToolSpec
from xpeval.adapters.registry import ADAPTER_REGISTRY
from xpeval.evals.acceptance.measure import CorpusSchema, measure_pair

pytestmark = pytest.mark.corpus


def test_no_corpus_tool_is_sent_with_a_rule_of_its_own_mode_broken() -> None:
    schemas = list(corpus_schemas())
    if not schemas:
        pytest.skip("the shared corpus (../shared/corpus next to the repository) is absent")
    broken = []
    for label, parameters in schemas:
        tool = ToolSpec(name="corpus_tool", description="from the corpus", parameters=parameters)
        for adapter in ADAPTER_REGISTRY:
            pair = measure_pair(adapter, CorpusSchema(label, tool), examples=0, seconds=0.0, fidelity=False)
            if pair.verdict != "refused" and pair.violations:
                broken.append((adapter, label, sorted({v.rule for v in pair.violations})))
    assert broken == []
