"""The tool registry: what it refuses, what it answers, what the model is shown."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel, ConfigDict, RootModel

from xpeval.adapters.contract import ToolSpec
from xpeval.evals.runtime import ToolNotFoundError, ToolRegistry, ToolRegistryError


class OrderRead(BaseModel):
    """Read one order."""

    order_id: str
    include_items: bool = False


class Empty(BaseModel):
    model_config = ConfigDict(extra="forbid")


def support_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register("order_read", "Read an order by id", OrderRead)
    registry.register("refund_preview", "Compute a refund without issuing it", OrderRead, risk="preview")
    registry.register("answer_user", "Final answer", Empty, risk="terminal")
    return registry


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_a_blank_id_is_refused(blank: str) -> None:
    with pytest.raises(ToolRegistryError, match="non-blank"):
        ToolRegistry().register(blank, "d", OrderRead)


def test_a_duplicate_id_is_refused_and_the_first_registration_stands() -> None:
    registry = support_registry()
    with pytest.raises(ToolRegistryError, match="duplicate tool id: order_read"):
        registry.register("order_read", "another", Empty)
    assert registry.require("order_read").description == "Read an order by id"


def test_an_input_model_that_is_not_an_object_schema_is_refused() -> None:
    with pytest.raises(ToolRegistryError, match="object schema"):
        ToolRegistry().register("count", "d", RootModel[int])


def test_an_unknown_risk_class_is_refused() -> None:
    with pytest.raises(ToolRegistryError, match="read, preview, terminal"):
        ToolRegistry().register("t", "d", OrderRead, risk="dangerous")  # type: ignore[arg-type]


def test_ids_come_back_in_declaration_order() -> None:
    assert support_registry().ids() == ("order_read", "refund_preview", "answer_user")


def test_sealing_stops_registration_and_is_idempotent() -> None:
    registry = support_registry()
    assert registry.seal() is registry.seal()
    with pytest.raises(ToolRegistryError, match="sealed"):
        registry.register("late", "d", Empty)
    assert registry.ids() == ("order_read", "refund_preview", "answer_user")


def test_select_derives_a_sealed_sub_catalog_in_declaration_order() -> None:
    registry = support_registry()
    stage = registry.select(["answer_user", "order_read"])
    assert stage.ids() == ("order_read", "answer_user")
    assert stage.sealed and not registry.sealed
    with pytest.raises(ToolRegistryError, match="sealed"):
        stage.register("late", "d", Empty)


def test_select_with_an_unknown_id_is_a_clear_error() -> None:
    with pytest.raises(ToolNotFoundError, match="unknown tool: order_write"):
        support_registry().select(["order_read", "order_write"])


def test_specs_show_the_model_each_input_models_json_schema() -> None:
    specs = support_registry().specs()
    assert [s.name for s in specs] == ["order_read", "refund_preview", "answer_user"]
    assert all(isinstance(s, ToolSpec) for s in specs)
    order_read = specs[0]
    assert order_read.description == "Read an order by id"
    assert order_read.parameters == OrderRead.model_json_schema()
    assert order_read.parameters["required"] == ["order_id"]


def test_editing_a_returned_spec_does_not_change_the_next_ones() -> None:
    registry = support_registry()
    registry.specs()[0].parameters["properties"].clear()
    assert registry.specs()[0].parameters["properties"], "the registry's schema was edited through a spec"


def test_resolve_parses_json_text_with_the_input_model() -> None:
    resolution = support_registry().resolve("order_read", '{"order_id": "A-1", "include_items": true}')
    assert resolution.ok
    assert resolution.arguments == OrderRead(order_id="A-1", include_items=True)


def test_resolve_accepts_already_decoded_arguments() -> None:
    resolution = support_registry().resolve("order_read", {"order_id": "A-1"})
    assert resolution.ok and resolution.arguments == OrderRead(order_id="A-1")


def test_blank_argument_text_means_no_arguments() -> None:
    assert support_registry().resolve("answer_user", "  ").ok


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"order_id": 7}', "order_id: Input should be a valid string"),
        ("{}", "order_id: Field required"),
        ('{"order_id": "A-1"', "not valid JSON"),
        ('["A-1"]', "not a JSON object"),
        ("[" * 100_000, "nest too deeply"),
    ],
)
def test_unparseable_or_schema_invalid_arguments_resolve_to_a_one_line_error(raw: str, reason: str) -> None:
    resolution = support_registry().resolve("order_read", raw)
    assert resolution.kind == "invalid_args" and resolution.arguments is None
    assert resolution.error is not None
    assert resolution.error.startswith("invalid arguments for order_read: ")
    assert reason in resolution.error and "\n" not in resolution.error


def test_resolve_of_an_unregistered_name_is_unknown_tool() -> None:
    resolution = support_registry().resolve("order_write", {})
    assert resolution.kind == "unknown_tool" and resolution.error == "unknown tool: order_write"


def test_require_of_an_unregistered_name_raises_not_found() -> None:
    with pytest.raises(ToolNotFoundError, match="unknown tool: order_write"):
        support_registry().require("order_write")


def test_definitions_handed_to_the_constructor_face_the_same_id_rules() -> None:
    definition = support_registry().require("order_read")
    blank = dataclasses.replace(definition, id=" ")
    with pytest.raises(ToolRegistryError, match="non-blank"):
        ToolRegistry([blank])
    with pytest.raises(ToolRegistryError, match="duplicate tool id: order_read"):
        ToolRegistry([definition, definition])
