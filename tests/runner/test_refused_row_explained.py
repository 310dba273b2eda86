"""An emulated row below 100 % says why (issue 36, point 8): in a team's own project whose case
offers a tool its adapter refuses (a recursive schema, which Vertex AI's `parameters` cannot
write), `xpeval run` and the scorecard name the tool the adapter's schema rules refuse."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests._cli import Cli

CASES = textwrap.dedent("""
    x-tools:
      tree: &tree
        name: build_tree
        description: Build a tree of labels.
        parameters:
          type: object
          $defs:
            Node:
              type: object
              properties:
                label: {type: string}
                children: {type: array, items: {$ref: "#/$defs/Node"}}
          properties:
            root: {$ref: "#/$defs/Node"}
          required: [root]
      lookup: &lookup
        name: lookup_order
        description: Look up an order by its number.
        parameters:
          type: object
          properties:
            order: {type: string}
          required: [order]
    cases:
      - id: tree_simple_01
        category: simple
        tools: [*tree]
        messages:
          - {role: user, content: "Build a tree with root label a."}
        expected:
          calls:
            - name: build_tree
              arguments: {root: [{label: ["a"]}]}
      - id: orders_simple_01
        category: simple
        tools: [*lookup]
        messages:
          - {role: user, content: "Where is my order A1234?"}
        expected:
          calls:
            - name: lookup_order
              arguments: {order: ["A1234"]}
""")

PROJECT = """
[project]
name = "my-service"
version = "0.1.0"

[tool.xpeval]
cases = "cases"
adapters = ["vertex-ai"]
"""


def test_an_emulated_row_below_100_percent_names_the_tools_its_adapter_refuses(
    cli: Cli, tmp_path: Path
) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "orders.yaml").write_text(CASES, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(PROJECT, encoding="utf-8")

    ran = cli("run", "--mode", "record", "--target", "emulator", "--no-progress", cwd=tmp_path)

    said = (
        "emulated|vertex-ai|gemini-2.5-flash: 50 % — 1 of 2 episode(s) not sent: 1 tool(s) refused by "
        "vertex-ai's schema rules: build_tree (`xpeval schemas --adapters vertex-ai` says why)"
    )
    assert said in ran.stderr, ran.stderr
    scorecard = (tmp_path / "reports" / "scorecard.md").read_text(encoding="utf-8")
    emulated = scorecard.split("## emulated", 1)[1].split("## ", 1)[0]
    assert f"- {said}" in emulated
