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


def _sent_for(adapter_id: str, choice: ToolChoice) -> str:
    adapter, script = scripted(adapter_id, Reply(result=TurnResult(text="ok")))
    result = asyncio.run(adapter.turn(request(tool_choice=choice)))
    assert result.error is None and len(script.requests) == 1, (adapter_id, choice, result.error)
    return json.dumps(script.request_json(0), sort_keys=True)


def test_every_declared_tool_choice_reaches_the_wire_as_a_request_of_its_own(xpeval_adapter_id: str) -> None:
    """Every mode the adapter declares is sent, not only the named one: the requests of any two
    declared modes differ (a wire that sends `none` or `required` as it sends `auto`, or drops
    them, has lost a mode it claims), and naming another tool changes the request too. Which
    bytes each mode takes is the wire's; that they are distinct is every wire's."""
    declared = effective_contract(xpeval_adapter_id).capabilities.tool_choice
    sent: dict[str, str] = {
        mode: _sent_for(xpeval_adapter_id, CHOICE[mode]) for mode in TOOL_CHOICE_MODES if mode in declared
    }
    if "named" in declared:
        sent["named (another tool)"] = _sent_for(xpeval_adapter_id, ForceTool(name="get_weather"))
    alike = [(a, b) for i, a in enumerate(sent) for b in list(sent)[i + 1 :] if sent[a] == sent[b]]
    assert alike == [], (
        f"{xpeval_adapter_id} declares tool_choice {sorted(declared)} but sends the same request for "
        + ", ".join(f"{a} and {b}" for a, b in alike)
    )


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
