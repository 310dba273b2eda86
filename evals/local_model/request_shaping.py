"""What the local server needs done to a request before any wire encodes it (pure).

llama-server ignores a named tool_choice (OpenAI's function object and Anthropic's
`{"type": "tool"}` alike) and lets the model pick any tool. Offering only the named tool with
`required` forces that call, so the request a case means is the request the model answers.
"""

from __future__ import annotations

from xpeval.adapters.contract import ForceTool, TurnRequest


def force_named_tool(request: TurnRequest) -> TurnRequest:
    """A named tool_choice becomes: only that tool, choice `required`. Anything else is unchanged.

    A name that is not among the request's tools is left as it is: narrowing to nothing would
    turn a bad case into a silently different one.
    """
    choice = request.tool_choice
    if not isinstance(choice, ForceTool):
        return request
    named = [tool for tool in request.tools if tool.name == choice.name]
    if not named:
        return request
    return request.model_copy(update={"tools": named[:1], "tool_choice": "required"})


def prepare_for_local_server(request: TurnRequest) -> TurnRequest:
    """Every rewrite the local server needs, in order (the local target's request hook)."""
    return force_named_tool(request)
