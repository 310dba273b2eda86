"""A case's tool environment: Python classes with an initial state, whose methods are the tools.

A case with an `environment` is judged by the state its calls leave (`xpeval.evals.verdict.state`),
not by matching calls: each turn's `expected.ground_truth` is executed on fresh instances and the
states compared, as BFCL's multi-turn checker does (docs/cases.md, "Tool environments").

A case file never names code to import: `kind` picks a family of classes xpeval knows, and
`classes` names classes of that family (`ENVIRONMENT_CLASSES`). Two families: `bfcl`, the API
classes shipped in the `bfcl-eval` package (`BFCL_CLASSES`; an optional install, never copied
here), and `retail`, xpeval's own store written from τ-bench's published retail domain
(`xpeval.evals.runtime.retail`, docs/cases.md "Task cases").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EnvironmentKind = Literal["bfcl", "retail"]

_BFCL_SOURCE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BFCL_CLASSES: dict[str, str] = {
    "GorillaFileSystem": f"{_BFCL_SOURCE}.gorilla_file_system",
    "MathAPI": f"{_BFCL_SOURCE}.math_api",
    "MessageAPI": f"{_BFCL_SOURCE}.message_api",
    "TwitterAPI": f"{_BFCL_SOURCE}.posting_api",
    "TicketAPI": f"{_BFCL_SOURCE}.ticket_api",
    "TradingBot": f"{_BFCL_SOURCE}.trading_bot",
    "TravelAPI": f"{_BFCL_SOURCE}.travel_booking",
    "VehicleControlAPI": f"{_BFCL_SOURCE}.vehicle_control",
}
"""The multi-turn API classes of bfcl-eval and their modules (the package's own
`CLASS_FILE_PATH_MAPPING`, less the web-search and memory backends, which need network or
heavy dependencies)."""

RETAIL_CLASSES: dict[str, str] = {"RetailStore": "xpeval.evals.runtime.retail"}
"""xpeval's retail store (τ-bench's retail domain: users, orders, products), part of xpeval."""
RETAIL_TABLES = ("users", "orders", "products")
"""What a retail `initial_state` may replace records of (by id)."""

ENVIRONMENT_CLASSES: dict[str, dict[str, str]] = {"bfcl": BFCL_CLASSES, "retail": RETAIL_CLASSES}
"""Per family (`kind`), its classes and their modules: the only code a case file can name."""

BFCL_INSTALL_HINT = (
    "install it with: pip install --no-deps bfcl-eval==2026.3.23 mpmath "
    "(--no-deps: it pins heavy dependencies its data and API classes do not need; MathAPI needs mpmath)"
)

BFCL_STATELESS: frozenset[str] = frozenset({"MathAPI"})
"""Classes BFCL builds without loading a scenario (its `STATELESS_CLASSES`)."""

BFCL_STEPS_PER_TURN = 20
"""BFCL's `MAXIMUM_STEP_LIMIT`: model steps with calls per user turn; a 21st step that calls
again ends the conversation (BFCL's force quit)."""


class EnvironmentCall(BaseModel):
    """A ground-truth call: executed, never matched, so its arguments are concrete values (an
    empty string is an empty string, not "optional")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class Environment(BaseModel):
    """Which classes a case's tools are methods of, and the state they start from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EnvironmentKind = "bfcl"
    classes: list[str] = Field(min_length=1)
    initial_state: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per class, the scenario its instance loads (BFCL's `initial_config`)."""
    long_context: bool = False
    """BFCL's long-context variant: the classes load their scenario padded with long content."""
    steps_per_turn: int = Field(default=BFCL_STEPS_PER_TURN, ge=1, le=100)
    """Model steps with calls allowed per user turn; one more that calls again ends the episode."""

    @model_validator(mode="after")
    def _known_classes(self) -> Environment:
        family = ENVIRONMENT_CLASSES[self.kind]
        for name in self.classes:
            if name not in family:
                raise ValueError(f"{name!r} is not a {self.kind} environment class ({', '.join(family)})")
        if len(set(self.classes)) != len(self.classes):
            raise ValueError("a class is listed twice")
        if self.kind == "retail":  # xpeval's own store: its tables are known before a run
            for name, state in self.initial_state.items():
                if name not in self.classes:
                    raise ValueError(f"initial_state.{name}: not a class of this environment")
                unknown = ", ".join(sorted(set(state) - set(RETAIL_TABLES)))
                if unknown:
                    known = ", ".join(RETAIL_TABLES)
                    raise ValueError(f"initial_state.{name}: unknown tables {unknown} (known: {known})")
        return self


__all__ = [
    "BFCL_CLASSES",
    "BFCL_INSTALL_HINT",
    "BFCL_STATELESS",
    "BFCL_STEPS_PER_TURN",
    "ENVIRONMENT_CLASSES",
    "RETAIL_CLASSES",
    "RETAIL_TABLES",
    "Environment",
    "EnvironmentCall",
    "EnvironmentKind",
]
