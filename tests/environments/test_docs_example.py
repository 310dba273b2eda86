"""The worked example of docs/cases.md, "Tool environments", loads as written and is judged as
the page says."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests._bfcl_multi_turn import needs_bfcl_environment
from xpeval.evals.cases.loader import load_case_file
from xpeval.evals.cases.model import Case
from xpeval.evals.verdict.state import state_verdict

pytestmark = needs_bfcl_environment

DOC = Path(__file__).resolve().parents[2] / "docs" / "cases.md"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Case:
    section = DOC.read_text(encoding="utf-8").split("## Tool environments", 1)[1]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, flags=re.DOTALL)[:1]
    path = tmp_path_factory.mktemp("doc") / "example.yaml"
    path.write_text(block, encoding="utf-8")
    (loaded,) = load_case_file(path, root=path.parent)
    return loaded.case


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


CD, MKDIR, PWD = call("cd", folder="docs"), call("mkdir", dir_name="out"), call("pwd")
CAT, TOUCH = call("cat", file_name="notes.txt"), call("touch", file_name="mail.txt")


@pytest.mark.parametrize(
    ("answer", "right", "wrong_at"),
    [
        ([[CD, MKDIR], [], [CAT]], True, None),
        ([[PWD, CD, MKDIR, PWD], [PWD], [PWD, CAT]], True, None),
        ([[MKDIR, CD], [], [CAT]], False, "turn 0"),
        ([[CD, MKDIR], [CAT], [CAT]], True, None),
        ([[CD, MKDIR], [TOUCH], [CAT]], False, "turn 2"),
        ([[CD, MKDIR], [], [PWD]], False, "turn 2"),
        ([[CD, MKDIR, CAT], [], [PWD]], True, None),
    ],
)
def test_the_worked_example_is_judged_as_the_page_says(
    example: Case, answer: list[list[dict[str, Any]]], right: bool, wrong_at: str | None
) -> None:
    verdict = state_verdict(example, answer)
    assert verdict.correct is right, verdict.reason
    if wrong_at is not None:
        assert str(verdict.reason).startswith(wrong_at)
