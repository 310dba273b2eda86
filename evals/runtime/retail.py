"""A retail store as a tool environment: τ-bench's retail domain, written for xpeval.

τ²-bench (and τ-bench before it) judges an agent that serves a store's customers: it looks
users and orders up, and cancels, changes or returns orders as the store's policy allows. This
module is a small faithful subset of that domain, written from its published policy and tool
descriptions (docs/cases.md, "Task cases", says what was chosen and why): the same tool names,
arguments, rules and errors, over a small database of xpeval's own (`retail_data.py`), never
τ-bench's.

The state is plain JSON (`users`, `orders`, `products`, each a dict by id), so two stores are
equal when their public attributes are, and the task reward hashes them
(`xpeval.evals.verdict.task_reward`). Every method is deterministic: no clock, no randomness.
A rule the policy states raises `ValueError` with τ²'s message; the environment turns it into
an error result the model sees (`xpeval.evals.runtime.environment`).
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable
from typing import Any

from xpeval.evals.cases.environment import RETAIL_TABLES
from xpeval.evals.runtime.retail_data import SEED

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
"""What τ²'s allowed characters can spell (`**` and `//` are `*` and `/` twice). Every value is
a float, so a power too large for one overflows at once instead of running for ever."""
_MAX_EXPRESSION = 200


class RetailStore:
    """The store: its users (with payment methods), orders and products."""

    def __init__(self) -> None:
        self.users: dict[str, dict[str, Any]] = {}
        self.orders: dict[str, dict[str, Any]] = {}
        self.products: dict[str, dict[str, Any]] = {}

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        """The seed database, then the scenario's records over it: a user, order or product the
        scenario gives replaces the seed's record of that id (`initial_state` of a case)."""
        unknown = sorted(set(scenario) - set(RETAIL_TABLES))
        if unknown:
            raise ValueError(
                f"unknown retail tables: {', '.join(unknown)} (known: {', '.join(RETAIL_TABLES)})"
            )
        for table in RETAIL_TABLES:
            records = copy.deepcopy(SEED[table])
            records.update(copy.deepcopy(scenario.get(table, {})))
            setattr(self, table, records)

    # -- lookups ------------------------------------------------------------------------------

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.orders:
            raise ValueError("Order not found")
        return self.orders[order_id]

    def _user(self, user_id: str) -> dict[str, Any]:
        if user_id not in self.users:
            raise ValueError("User not found")
        return self.users[user_id]

    def _product(self, product_id: str) -> dict[str, Any]:
        if product_id not in self.products:
            raise ValueError("Product not found")
        return self.products[product_id]

    def _payment_method(self, user_id: str, payment_method_id: str) -> dict[str, Any]:
        methods: dict[str, dict[str, Any]] = self._user(user_id)["payment_methods"]
        if payment_method_id not in methods:
            raise ValueError("Payment method not found")
        return methods[payment_method_id]

    def _variant(self, product_id: str, item_id: str) -> dict[str, Any]:
        variants: dict[str, dict[str, Any]] = self._product(product_id)["variants"]
        if item_id not in variants:
            raise ValueError("Variant not found")
        return variants[item_id]

    # -- read tools ---------------------------------------------------------------------------

    def find_user_id_by_email(self, email: str) -> str:
        """The id of the user with this email (any case)."""
        for user_id, user in self.users.items():
            if user["email"].lower() == email.lower():
                return user_id
        raise ValueError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """The id of the user with this first and last name (any case) and zip code."""
        for user_id, user in self.users.items():
            name = user["name"]
            if (
                name["first_name"].lower() == first_name.lower()
                and name["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ValueError("User not found")

    def get_user_details(self, user_id: str) -> dict[str, Any]:
        return copy.deepcopy(self._user(user_id))

    def get_order_details(self, order_id: str) -> dict[str, Any]:
        return copy.deepcopy(self._order(order_id))

    def get_product_details(self, product_id: str) -> dict[str, Any]:
        return copy.deepcopy(self._product(product_id))

    def list_all_product_types(self) -> dict[str, str]:
        """Product names to their ids, by name."""
        return {p["name"]: p["product_id"] for p in sorted(self.products.values(), key=lambda p: p["name"])}

    def calculate(self, expression: str) -> str:
        """An arithmetic expression (numbers, + - * / ** //, parentheses) rounded to 2 places.

        τ² evaluates the text with Python's `eval` after checking its characters; this walks
        its syntax tree instead (the same answers for the same allowed expressions)."""
        if len(expression) > _MAX_EXPRESSION or not all(c in "0123456789+-*/(). " for c in expression):
            raise ValueError("Invalid characters in expression")
        try:  # a syntax error reads as `eval`'s (the source named "<string>")
            value = _arithmetic(ast.parse(expression, filename="<string>", mode="eval").body)
        except ZeroDivisionError:
            raise ZeroDivisionError("division by zero") from None  # τ²'s integer division's words
        except (TypeError, OverflowError) as exc:
            raise ValueError(f"Invalid expression: {exc}") from exc
        return str(round(float(value), 2))

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write tools (the policy asks for the user's explicit confirmation before each) --------

    def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order; each payment is refunded to its method, a gift card at once."""
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ValueError("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            method = self._payment_method(order["user_id"], payment["payment_method_id"])
            refunds.append({**payment, "transaction_type": "refund"})
            if method["source"] == "gift_card":
                method["balance"] = round(method["balance"] + payment["amount"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return copy.deepcopy(order)

    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Ship a pending order to another address."""
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        order["address"] = {
            "address1": address1,
            "address2": address2,
            "city": city,
            "state": state,
            "country": country,
            "zip": zip,
        }
        return copy.deepcopy(order)

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Ask for a return of some items of a delivered order; the refund goes to the original
        payment method or a gift card of the user's."""
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        method = self._payment_method(order["user_id"], payment_method_id)
        original = order["payment_history"][0]["payment_method_id"]
        if method["source"] != "gift_card" and payment_method_id != original:
            raise ValueError("Payment method should be the original payment method")
        _check_items(order, item_ids, "Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return copy.deepcopy(order)

    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Ask for an exchange of items of a delivered order for available items of the same
        products; the price difference is paid or refunded with `payment_method_id`."""
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be exchanged")
        for item_id in item_ids:
            if item_ids.count(item_id) > [i["item_id"] for i in order["items"]].count(item_id):
                raise ValueError(f"Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match.")
        difference = 0.0
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = next(i for i in order["items"] if i["item_id"] == item_id)
            variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            difference += variant["price"] - item["price"]
        difference = round(difference, 2)
        method = self._payment_method(order["user_id"], payment_method_id)
        if method["source"] == "gift_card" and method["balance"] < difference:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = difference
        return copy.deepcopy(order)


def _check_items(order: dict[str, Any], item_ids: list[str], message: str) -> None:
    """Every listed item is in the order, as many times as it is listed."""
    in_order = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > in_order.count(item_id):
            raise ValueError(message)


def _arithmetic(node: ast.expr) -> float:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return float(_ARITHMETIC[type(node.op)](_arithmetic(node.left), _arithmetic(node.right)))
    raise TypeError("only numbers, + - * / ** // and parentheses")


__all__ = ["CANCEL_REASONS", "RetailStore"]
