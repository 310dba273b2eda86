"""A recorded conversation's tools may have no description (real recordings offer such tools):
every adapter's request for them passes its SDK's validation. Bedrock's botocore model takes
`description` only with at least one character, so the wire leaves the key out."""

from __future__ import annotations

import pytest

from xpeval.adapters.contract import ToolSpec, TurnRequest, UserMessage
from xpeval.adapters.registry import adapter_ids, create_adapter

BARE = ToolSpec(name="lookup", parameters={"type": "object", "properties": {"q": {"type": "string"}}})


@pytest.mark.parametrize("adapter_id", adapter_ids())
def test_a_tool_without_a_description_passes_every_adapters_request_validation(adapter_id: str) -> None:
    adapter = create_adapter(adapter_id)
    prepared = adapter.prepare(
        TurnRequest(model=adapter.default_model, messages=[UserMessage(content="find x")], tools=[BARE])
    )
    adapter.wire.validate_encoded(prepared.kwargs)  # raises what the SDK refuses


def test_bedrock_sends_no_empty_description() -> None:
    adapter = create_adapter("bedrock-converse")
    request = TurnRequest(model=adapter.default_model, messages=[UserMessage(content="find x")], tools=[BARE])
    spec = adapter.prepare(request).kwargs["toolConfig"]["tools"][0]["toolSpec"]
    assert "description" not in spec and spec["name"] == "lookup"
