"""pytest wiring shared by the whole suite."""

from __future__ import annotations

import os

pytest_plugins = ("evals.cassettes.pytest_plugin",)  # --cassette-mode replay|record|live, `cassette_episode`

# Tests never talk to real providers: make sure no ambient key leaks into a request or cassette.
for _name in (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "MOONSHOT_API_KEY",
    "MIMO_API_KEY",
    "OPENAI_COMPATIBLE_API_KEY",
    "VERTEX_API_KEY",
):
    if os.environ.get(_name) and not os.environ.get("XPEVAL_LIVE"):
        os.environ.pop(_name)


def pytest_generate_tests(metafunc):  # type: ignore[no-untyped-def]
    """Registry-derived parametrization: any test taking `adapter_id` runs once per registered
    adapter, wrappers included, so a new registry entry gets the whole suite by itself."""
    if "adapter_id" in metafunc.fixturenames:
        from adapters.registry import ADAPTER_REGISTRY

        metafunc.parametrize("adapter_id", list(ADAPTER_REGISTRY))
