"""The shipped retail task set (tasks/retail/cases) and its recordings, as the task tests share them."""

from __future__ import annotations

from pathlib import Path

from tests._corpus import REPO_ROOT
from xpeval.evals.cases.loader import load_cases
from xpeval.evals.cases.model import Case

RETAIL = REPO_ROOT / "tasks" / "retail"
RETAIL_TASKS = RETAIL / "cases"
RETAIL_CASSETTES = RETAIL / "cassettes"


def retail_tasks(folder: Path = RETAIL_TASKS) -> dict[str, Case]:
    return {item.case.id: item.case for item in load_cases(folder)}
