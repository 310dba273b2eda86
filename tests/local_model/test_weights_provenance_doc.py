"""docs/local-model.md states where the bundled weights come from (issue 36, point 10): each served
model's upstream file (Qwen's GGUF release on Hugging Face), its size and its sha256, the figures
`evals/local_model/models.py` pins and checks before serving, so a reviewer can check them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xpeval.evals.local_model.models import MODELS, ServedModel

DOC = Path(__file__).resolve().parents[2] / "docs" / "local-model.md"


@pytest.mark.parametrize("model", MODELS, ids=[m.alias for m in MODELS])
def test_the_local_model_doc_names_each_weights_upstream_file_size_and_sha256(model: ServedModel) -> None:
    upstream = re.search(
        r"^\| joined file \| upstream .*?(?=^\s*$)", DOC.read_text(encoding="utf-8"), re.M | re.S
    )
    assert upstream, "docs/local-model.md has no table of the weights' upstream files"
    repository = f"Qwen/{model.description.split(',')[0]}-GGUF"  # Qwen2.5-Coder-1.5B-Instruct-GGUF
    rows = [row for row in upstream[0].splitlines() if f"`{repository}`" in row]
    assert len(rows) == 1, f"no upstream row naming {repository}"
    assert f"`{model.gguf_name}`" in rows[0]
    assert f"{model.size:,}" in rows[0] and f"`{model.sha256}`" in rows[0], rows[0]
