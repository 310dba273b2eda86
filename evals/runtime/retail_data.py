"""The retail store's seed database: three customers, three products, six orders.

Written for xpeval (names, ids, prices and addresses are made up); its shape follows τ-bench's
retail database (users with payment methods, orders with items, payments and fulfilments,
products with variants), so its tools read and change the same fields. A case's
`initial_state` replaces records of it by id (`RetailStore._load_scenario`).
"""

from __future__ import annotations

from typing import Any


def _address(address1: str, address2: str, city: str, state: str, zip: str) -> dict[str, str]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "state": state,
        "country": "USA",
        "zip": zip,
    }


def _item(product: str, name: str, item_id: str, price: float, **options: str) -> dict[str, Any]:
    return {"name": name, "product_id": product, "item_id": item_id, "price": price, "options": options}


def _paid(amount: float, method: str) -> list[dict[str, Any]]:
    return [{"transaction_type": "payment", "amount": amount, "payment_method_id": method}]


_MEI = _address("12 Alder Lane", "", "Portland", "OR", "97205")
_OMAR = _address("401 Wells Street", "Unit 3", "Chicago", "IL", "60614")
_LUCIA = _address("7 Congress Avenue", "", "Austin", "TX", "78701")

_SHIRT_BLUE_M = _item("6001", "T-Shirt", "8101", 24.5, color="blue", size="M")
_SHIRT_RED_M = _item("6001", "T-Shirt", "8102", 24.5, color="red", size="M")
_BOTTLE_500 = _item("6002", "Water Bottle", "8201", 19.99, capacity="500ml", material="steel")
_LAMP_BLACK = _item("6003", "Desk Lamp", "8301", 89.99, color="black", brightness="high")


def _order(
    order_id: str,
    user_id: str,
    status: str,
    address: dict[str, str],
    items: list[dict[str, Any]],
    method: str,
) -> dict[str, Any]:
    total = round(sum(item["price"] for item in items), 2)
    delivered = status == "delivered"
    return {
        "order_id": order_id,
        "user_id": user_id,
        "status": status,
        "address": dict(address),
        "items": [dict(item) for item in items],
        "payment_history": _paid(total, method),
        "fulfillments": (
            [{"tracking_id": [f"TRK{order_id[2:]}7733"], "item_ids": [i["item_id"] for i in items]}]
            if delivered
            else []
        ),
    }


SEED: dict[str, dict[str, dict[str, Any]]] = {
    "users": {
        "mei_tanaka_4821": {
            "user_id": "mei_tanaka_4821",
            "name": {"first_name": "Mei", "last_name": "Tanaka"},
            "email": "mei.tanaka@example.com",
            "address": dict(_MEI),
            "payment_methods": {
                "gift_card_3310": {"source": "gift_card", "id": "gift_card_3310", "balance": 40.0},
                "credit_card_7714": {
                    "source": "credit_card",
                    "id": "credit_card_7714",
                    "brand": "visa",
                    "last_four": "4417",
                },
            },
            "orders": ["#W1001", "#W1002"],
        },
        "omar_haddad_7713": {
            "user_id": "omar_haddad_7713",
            "name": {"first_name": "Omar", "last_name": "Haddad"},
            "email": "omar.haddad@example.com",
            "address": dict(_OMAR),
            "payment_methods": {
                "credit_card_5520": {
                    "source": "credit_card",
                    "id": "credit_card_5520",
                    "brand": "mastercard",
                    "last_four": "9034",
                },
                "paypal_9021": {"source": "paypal", "id": "paypal_9021"},
            },
            "orders": ["#W1003", "#W1004"],
        },
        "lucia_ferreira_2094": {
            "user_id": "lucia_ferreira_2094",
            "name": {"first_name": "Lucia", "last_name": "Ferreira"},
            "email": "lucia.ferreira@example.com",
            "address": dict(_LUCIA),
            "payment_methods": {
                "gift_card_6642": {"source": "gift_card", "id": "gift_card_6642", "balance": 15.0},
                "credit_card_1188": {
                    "source": "credit_card",
                    "id": "credit_card_1188",
                    "brand": "amex",
                    "last_four": "2008",
                },
            },
            "orders": ["#W1005", "#W1006"],
        },
    },
    "orders": {
        "#W1001": _order(
            "#W1001", "mei_tanaka_4821", "pending", _MEI, [_SHIRT_BLUE_M, _BOTTLE_500], "gift_card_3310"
        ),
        "#W1002": _order("#W1002", "mei_tanaka_4821", "delivered", _MEI, [_LAMP_BLACK], "credit_card_7714"),
        "#W1003": _order(
            "#W1003", "omar_haddad_7713", "delivered", _OMAR, [_BOTTLE_500, _SHIRT_RED_M], "credit_card_5520"
        ),
        "#W1004": _order("#W1004", "omar_haddad_7713", "pending", _OMAR, [_LAMP_BLACK], "paypal_9021"),
        "#W1005": _order(
            "#W1005", "lucia_ferreira_2094", "delivered", _LUCIA, [_BOTTLE_500], "credit_card_1188"
        ),
        "#W1006": _order(
            "#W1006", "lucia_ferreira_2094", "processed", _LUCIA, [_SHIRT_BLUE_M], "credit_card_1188"
        ),
    },
    "products": {
        "6001": {
            "name": "T-Shirt",
            "product_id": "6001",
            "variants": {
                "8101": {
                    "item_id": "8101",
                    "options": {"color": "blue", "size": "M"},
                    "available": True,
                    "price": 24.5,
                },
                "8102": {
                    "item_id": "8102",
                    "options": {"color": "red", "size": "M"},
                    "available": True,
                    "price": 24.5,
                },
                "8103": {
                    "item_id": "8103",
                    "options": {"color": "blue", "size": "L"},
                    "available": False,
                    "price": 26.0,
                },
            },
        },
        "6002": {
            "name": "Water Bottle",
            "product_id": "6002",
            "variants": {
                "8201": {
                    "item_id": "8201",
                    "options": {"capacity": "500ml", "material": "steel"},
                    "available": True,
                    "price": 19.99,
                },
                "8202": {
                    "item_id": "8202",
                    "options": {"capacity": "750ml", "material": "steel"},
                    "available": True,
                    "price": 24.99,
                },
                "8203": {
                    "item_id": "8203",
                    "options": {"capacity": "750ml", "material": "plastic"},
                    "available": True,
                    "price": 12.99,
                },
            },
        },
        "6003": {
            "name": "Desk Lamp",
            "product_id": "6003",
            "variants": {
                "8301": {
                    "item_id": "8301",
                    "options": {"color": "black", "brightness": "high"},
                    "available": True,
                    "price": 89.99,
                },
                "8302": {
                    "item_id": "8302",
                    "options": {"color": "white", "brightness": "low"},
                    "available": False,
                    "price": 64.99,
                },
            },
        },
    },
}
"""Users, orders and products by id (order ids carry τ-bench's `#W` prefix)."""


__all__ = ["SEED"]
