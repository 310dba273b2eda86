"""Names that exist on every object (`toString`, `__class__` ...) resolve to nothing unless registered."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from xpeval.evals.runtime import ToolNotFoundError, ToolRegistry, ToolRouter

BUILTIN_NAMES = ["toString", "__proto__", "constructor", "__class__", "__init__", "__dict__", "get", "keys"]


class NoArgs(BaseModel):
    pass


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_router_answers_unknown_tool_for_an_unregistered_builtin_name(name: str) -> None:
    router = ToolRouter()
    router.register("search", lambda args: "found")
    result = router.call(name, {}, now_ms=5)
    assert not result.ok and result.error == f"unknown tool: {name}"
    assert not router.has(name)
    assert [(row.tool, row.outcome) for row in router.audit_log()] == [(name, "unknown_tool")]


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_registry_finds_nothing_for_an_unregistered_builtin_name(name: str) -> None:
    registry = ToolRegistry()
    registry.register("search", "Search", NoArgs)
    assert not registry.has(name)
    assert registry.get(name) is None
    with pytest.raises(ToolNotFoundError, match=f"unknown tool: {name}"):
        registry.require(name)
    assert registry.resolve(name, {}).kind == "unknown_tool"


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_a_builtin_name_can_still_be_registered_as_a_tool(name: str) -> None:
    registry = ToolRegistry()
    registry.register(name, "a tool that happens to have this name", NoArgs)
    router = ToolRouter.from_registry(registry)
    assert registry.require(name).id == name
    assert router.call(name, {}, now_ms=0).ok
