"""pytest wiring of this repository's own tests.

The registry-derived parametrization, cassette modes and the conformance suite come from
xpeval's own pytest plugin (`xpeval.evals.conformance.pytest_plugin`, loaded through its `pytest11` entry
point),
exactly as in any other project.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parent
LINKS = {ROOT / "adapters": ROOT / "xpeval" / "adapters", ROOT / "evals": ROOT / "xpeval" / "evals"}
"""The design's top-level folders and the links that import them as `xpeval.adapters`,
`xpeval.evals` (docs/ARCHITECTURE.md, "One import name")."""


def pytest_configure(config: pytest.Config) -> None:
    """`pytest evals/conformance` collects the suite through its link, as `xpeval/evals/...`: by
    the folder's own path pytest would import it a second time, as bare `evals.*` modules (and
    `pytest xpeval/evals/conformance evals/conformance` would run it twice)."""
    config.args[:] = [_through_the_link(arg, config.invocation_params.dir) for arg in config.args]


def _through_the_link(arg: str, invoked_in: Path) -> str:
    path, separator, node = arg.partition("::")
    absolute = Path(os.path.abspath(invoked_in / path))  # abspath: keeps the links as written
    for folder, link in LINKS.items():
        if absolute.is_relative_to(folder):
            return str(link / absolute.relative_to(folder)) + separator + node
    return arg


def _clear_provider_keys() -> None:
    """Tests never talk to real providers: no ambient key may leak into a request or cassette.
    The key variables are each provider's own data (`Provider.key_vars`)."""
    from xpeval.adapters.registry import providers

    if os.environ.get("XPEVAL_LIVE"):
        return
    for name in {var for provider in providers() for var in provider.key_vars}:
        os.environ.pop(name, None)


_clear_provider_keys()
