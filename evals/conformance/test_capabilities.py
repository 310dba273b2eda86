"""Every capability an adapter declares is what it does; what it does not declare it refuses."""

from __future__ import annotations

import asyncio
import json

import pytest

from xpeval.adapters.adapter import TOOL_CHOICE_MODES, ToolChoiceMode
from xpeval.adapters.contract import ForceTool, ToolChoice, TurnResult
from xpeval.adapters.registry import effective_contract
from xpeval.evals.conformance._fixtures import request, scripted, two_calls
from xpeval.evals.emulator import Reply

CHOICE: dict[ToolChoiceMode, ToolChoice] = {
    "auto": "auto",
    "none": "none",
    "required": "required",
    "named": ForceTool(name="get_time"),
}


@pytest.mark.parametrize("mode", TOOL_CHOICE_MODES)
def test_a_declared_tool_choice_is_sent_and_an_undeclared_one_refused(
    xpeval_adapter_id: str, mode: ToolChoiceMode
) -> None:
    declared = mode in effective_contract(xpeval_adapter_id).capabilities.tool_choice
    adapter, script = scripted(xpeval_adapter_id, Reply(result=TurnResult(text="ok")))
    result = asyncio.run(adapter.turn(request(tool_choice=CHOICE[mode])))
    if declared:
        assert result.error is None and len(script.requests) == 1, result.error
    else:
        assert result.error is not None and result.error.kind == "refused" and not script.requests


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_declared_parallel_and_streamed_calls_decode_whole(xpeval_adapter_id: str, stream: bool) -> None:
    capabilities = effective_contract(xpeval_adapter_id).capabilities
    if stream and not capabilities.streamed_tool_calls:
        pytest.skip(f"{xpeval_adapter_id} declares no streamed tool calls")
    adapter, _ = scripted(xpeval_adapter_id, Reply(result=two_calls()))
    result = asyncio.run(adapter.turn(request(stream=stream)))
    names = [call.name for call in result.tool_calls]
    if capabilities.parallel_calls:
        assert names == ["get_weather", "get_time"], (
            f"{xpeval_adapter_id} declares parallel calls, decoded {names}"
        )
    else:
        assert len(names) <= 1, f"{xpeval_adapter_id} declares no parallel calls, decoded {names}"


def test_strict_schemas_are_sent_exactly_when_declared(xpeval_adapter_id: str) -> None:
    declared = effective_contract(xpeval_adapter_id).capabilities.strict_schemas
    adapter, script = scripted(xpeval_adapter_id, Reply(result=TurnResult(text="ok")))
    prepared = adapter.prepare(request())
    asyncio.run(adapter.turn(request()))
    sent = json.dumps(script.request_json(0))
    strict_sent = prepared.tools.strict is True and '"strict": true' in sent
    assert strict_sent == declared, (
        f"{xpeval_adapter_id} declares strict_schemas={declared} but "
        f"{'sends' if strict_sent else 'does not send'} strict tools"
    )
