"""Task case files: the shipped retail set loads and validates, and a broken task case is refused
with every problem listed at once, each naming its case and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._cli import Cli
from tests.tasks._retail import RETAIL_TASKS, retail_tasks
from xpeval.evals.cases.loader import CaseFileProblems, load_cases
from xpeval.evals.cases.task import STOP
from xpeval.evals.runtime.environment import ToolEnvironment
from xpeval.evals.runtime.retail import RetailStore

GOOD = """
  - id: good_task
    category: task
    environment: {kind: retail, classes: [RetailStore]}
    tools:
      - name: get_order_details
        description: An order.
        parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
    messages: [{role: system, content: "Help the user."}]
    task:
      user: {instructions: "You want the status of #W1001.", script: ["What is the status of #W1001?"]}
      communicate: [pending]
    expected: {ground_truth: []}
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "tasks.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_the_retail_set_loads_five_tasks_in_the_retail_store() -> None:
    tasks = retail_tasks()
    assert len(tasks) == 5
    for case in tasks.values():
        assert case.category == "task" and case.task is not None and case.environment is not None
        assert case.environment.kind == "retail" and case.task.user.script
        assert all(message.role == "system" for message in case.messages)
        offered = {tool.name for tool in case.tools}
        assert offered <= set(ToolEnvironment(case.environment).method_names)
        assert {action.name for action in case.expected.ground_truth or []} <= offered  # type: ignore[union-attr]


def test_the_retail_sets_expected_actions_succeed_on_a_fresh_store() -> None:
    for case in retail_tasks().values():
        environment = ToolEnvironment(case.environment)  # type: ignore[arg-type]
        for action in case.expected.ground_truth or []:  # type: ignore[union-attr]
            outcome = environment.call(action.name, action.arguments)
            assert not outcome.error, (case.id, outcome.text)


def test_the_validate_command_accepts_the_retail_set(cli: Cli) -> None:
    ran = cli("cases", "validate", str(RETAIL_TASKS))
    assert ran.returncode == 0, ran.stderr
    assert "5 cases in 1 file(s) are valid (5 task)" in ran.stdout + ran.stderr


def test_a_good_task_case_loads(tmp_path: Path) -> None:
    (loaded,) = load_cases(write(tmp_path, "cases:" + GOOD))
    assert loaded.case.task is not None and loaded.case.task.max_turns == 10


BROKEN = {
    "not_a_task": (
        "task: a task case (category task) has a task block, and only",
        "category: task",
        "category: multi_turn",
    ),
    "blank_line": ("task.user.script: line 0 is blank", '["What is the status of #W1001?"]', '["  "]'),
    "stop_in_script": ("holds an end token", '["What is the status of #W1001?"]', f'["Thanks! {STOP}"]'),
    "blank_info": ("task.communicate: entry 0 is blank", "[pending]", '[" "]'),
    "no_room": (
        "task.max_turns: 1 leaves no room",
        "communicate: [pending]",
        "communicate: [pending]\n      max_turns: 1",
    ),
    "user_message": (
        "messages: a task's messages are the agent's instructions",
        "role: system",
        "role: user",
    ),
    "no_environment": (
        "task: a task runs in an environment",
        "    environment: {kind: retail, classes: [RetailStore]}\n",
        "",
    ),
    "unknown_class": ("'Shop' is not a retail environment class (RetailStore)", "[RetailStore]", "[Shop]"),
    "unknown_table": (
        "initial_state.RetailStore: unknown tables customers (known: users, orders, products)",
        "classes: [RetailStore]}",
        "classes: [RetailStore], initial_state: {RetailStore: {customers: {}}}}",
    ),
    "unknown_field": ("task.usr: unknown field (did you mean 'user'?)", "      user:", "      usr:"),
}


def test_a_broken_task_file_lists_every_problem_at_once(tmp_path: Path) -> None:
    text = "cases:"
    for name, (_, old, new) in BROKEN.items():
        case = GOOD.replace("good_task", name)
        assert old in case, name
        text += case.replace(old, new, 1)
    with pytest.raises(CaseFileProblems) as raised:
        load_cases(write(tmp_path, text))
    lines = raised.value.lines
    for index, (name, (message, _, _)) in enumerate(BROKEN.items()):
        mine = [line for line in lines if f"case {index} ({name})" in line]
        assert mine and any(message in line for line in mine), (name, mine)
        assert all(line.startswith("tasks.yaml: ") for line in mine)
    assert raised.value.count >= len(BROKEN)


def test_a_scenario_replaces_seed_records_by_id_and_refuses_unknown_tables() -> None:
    store = RetailStore()
    store._load_scenario({"orders": {"#W1001": {"order_id": "#W1001", "status": "delivered"}}})
    assert store.orders["#W1001"]["status"] == "delivered" and "#W1002" in store.orders
    with pytest.raises(ValueError, match="unknown retail tables: customers"):
        RetailStore()._load_scenario({"customers": {}})
