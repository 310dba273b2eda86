"""A user's project with its own case folder: the shop whose order lookups several tests play."""

from __future__ import annotations

from pathlib import Path

ORDER_CASES = """
x-tools:
  lookup: &lookup
    name: lookup_order
    description: Look up an order by its number.
    parameters:
      type: object
      properties:
        order: {type: string, pattern: "^A[0-9]{4}$"}
      required: [order]
cases:
  - id: orders_simple_01
    category: simple
    tools: [*lookup]
    messages:
      - {role: user, content: "Where is my order A1234?"}
    expected:
      calls:
        - name: lookup_order
          arguments: {order: ["A1234"]}
  - id: orders_irrelevance_01
    category: irrelevance
    tools: [*lookup]
    messages:
      - {role: user, content: "Tell me a joke."}
    expected: {no_call: true}
"""


def shop_project(tmp_path: Path, tool_xpeval: str) -> Path:
    """`tmp_path/shop` with `evals/cases/orders.yaml` and `tool_xpeval` as its `[tool.xpeval]` table."""
    root = tmp_path / "shop"
    (root / "evals" / "cases").mkdir(parents=True)
    (root / "evals" / "cases" / "orders.yaml").write_text(ORDER_CASES)
    (root / "pyproject.toml").write_text("[tool.xpeval]\n" + tool_xpeval)
    return root
