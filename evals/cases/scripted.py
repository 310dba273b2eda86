"""Tool handlers that serve a case's scripted outputs, for the runtime's tool router.

`ToolRouter.register(name, scripted_handler(case, name), requires_approval=name in case.approvals)`
makes every run of a case see the same tool results. A handler answers with the text of the
first matching `tool_outputs` rule; a rule marked `is_error`, or a call that no rule answers
(the model left the scripted path), raises, so the router reports it as the tool's error and
the model sees an error result instead of an invented value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from xpeval.evals.cases.model import Case


class ScriptedToolError(RuntimeError):
    """The scripted output of this call is an error; the message is what the model sees."""


class UnscriptedCallError(LookupError):
    """No scripted output answers this call."""


def scripted_handler(case: Case, tool: str) -> Callable[[Any], str]:
    """A handler for `tool` that answers from `case.tool_outputs` (see the module docstring)."""

    def handle(arguments: Any) -> str:
        if isinstance(arguments, BaseModel):
            arguments = arguments.model_dump(mode="json")
        if not isinstance(arguments, Mapping):
            raise UnscriptedCallError(f"{tool}: arguments must be an object")
        rule = case.scripted_output(tool, arguments)
        if rule is None:
            raise UnscriptedCallError(f"{tool}: no result is available for these arguments")
        if rule.is_error:
            raise ScriptedToolError(rule.content)
        return rule.content

    return handle
