"""Pointing adapters at the local server, and the named-tool_choice workaround."""

from __future__ import annotations

import pytest

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ForceTool, ToolSpec, TurnRequest, UserMessage
from xpeval.adapters.registry import adapter_ids, effective_contract
from xpeval.evals.local_model import (
    DEFAULT_MODEL,
    MODELS,
    LocalModelError,
    ServedModel,
    create_local_adapter,
    force_named_tool,
    local_adapter_ids,
    local_base_url,
)

WEATHER = ToolSpec(
    name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}
)
TIME = ToolSpec(name="get_time")


def _request(choice: object) -> TurnRequest:
    return TurnRequest.model_validate(
        {
            "model": "m",
            "messages": [UserMessage(content="hi")],
            "tools": [WEATHER, TIME],
            "tool_choice": choice,
        }
    )


def test_a_named_tool_choice_becomes_only_that_tool_with_required() -> None:
    forced = force_named_tool(_request(ForceTool(name="get_time")))

    assert [tool.name for tool in forced.tools] == ["get_time"]
    assert forced.tool_choice == "required"


@pytest.mark.parametrize("choice", ["auto", "none", "required"])
def test_other_tool_choices_pass_unchanged(choice: str) -> None:
    request = _request(choice)

    assert force_named_tool(request) == request


def test_naming_a_tool_that_is_not_offered_is_left_for_the_provider_to_judge() -> None:
    request = _request(ForceTool(name="missing"))

    assert force_named_tool(request) == request


def test_each_served_wire_gets_the_url_shape_its_sdk_expects() -> None:
    assert local_base_url("openai-chat", 18181) == "http://127.0.0.1:18181/v1"
    assert local_base_url("openai-responses", 18181) == "http://127.0.0.1:18181/v1"
    assert local_base_url("anthropic-messages", 18181) == "http://127.0.0.1:18181"
    with pytest.raises(LocalModelError, match="google-genai"):
        local_base_url("google-genai")


def test_adapters_that_keep_their_base_url_point_at_the_local_server() -> None:
    served = local_adapter_ids(port=18181)

    assert {"openai-chat", "openai-compatible", "openai-responses", "anthropic-messages"} <= set(served)
    for adapter_id in served:
        assert effective_contract(adapter_id).wire != "google-genai"


def test_adapters_that_rebuild_the_url_are_refused_with_the_reason() -> None:
    refused = set(adapter_ids()) - set(local_adapter_ids())

    assert {"azure-openai", "azure", "google-genai", "vertex-ai"} <= refused
    with pytest.raises(LocalModelError, match="azure cannot point at the local model"):
        create_local_adapter("azure")


def test_a_local_adapter_sends_a_named_choice_as_the_one_tool_required() -> None:
    adapter = create_local_adapter("openai-compatible", port=18181)

    kwargs = adapter.prepare(_request(ForceTool(name="get_weather"))).kwargs

    assert [tool["function"]["name"] for tool in kwargs["tools"]] == ["get_weather"]
    assert kwargs["tool_choice"] == "required"
    assert str(adapter.client.base_url).rstrip("/") == "http://127.0.0.1:18181/v1"


def _url(adapter: object) -> str:
    return str(adapter.client.base_url).rstrip("/")  # type: ignore[attr-defined]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.alias)
def test_an_adapter_points_at_the_port_of_the_model_it_names(model: ServedModel) -> None:
    by_object = create_local_adapter("openai-responses", model=model)
    by_alias = create_local_adapter("anthropic-messages", model=model.alias)

    assert _url(by_object) == f"http://127.0.0.1:{model.port}/v1"
    assert _url(by_alias) == f"http://127.0.0.1:{model.port}"
    assert by_object.prepare(_request("auto")).kwargs["model"] == "m"  # the request's own name is kept


def test_without_a_model_the_request_names_it_or_the_default_answers() -> None:
    other = MODELS[1]

    named = create_local_adapter("openai-compatible", AdapterSettings(model=other.alias))
    unnamed = create_local_adapter("openai-compatible")
    unknown = create_local_adapter("openai-compatible", AdapterSettings(model="some-model"))

    assert _url(named) == f"http://127.0.0.1:{other.port}/v1"
    assert _url(unnamed) == _url(unknown) == f"http://127.0.0.1:{DEFAULT_MODEL.port}/v1"


def test_the_adapters_default_model_is_the_served_models_alias() -> None:
    for model in MODELS:
        assert create_local_adapter("openai-compatible", model=model).default_model == model.alias


def test_a_request_naming_one_model_is_not_sent_to_another() -> None:
    with pytest.raises(LocalModelError, match=r"names model .* but is sent to"):
        create_local_adapter("openai-compatible", AdapterSettings(model=MODELS[0].alias), model=MODELS[1])


def test_every_model_serves_the_same_adapters() -> None:
    assert local_adapter_ids() == local_adapter_ids(port=MODELS[1].port)
