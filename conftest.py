"""pytest wiring of this repository's own tests.

The registry-derived parametrization, cassette modes and the conformance suite come from
xpeval's own pytest plugin (`xpeval.evals.conformance.pytest_plugin`, loaded through its `pytest11` entry
point),
exactly as in any other project.
"""

from __future__ import annotations

import os


def _clear_provider_keys() -> None:
    """Tests never talk to real providers: no ambient key may leak into a request or cassette.
    The key variables are each provider's own data (`Provider.key_vars`)."""
    from xpeval.adapters.registry import providers

    if os.environ.get("XPEVAL_LIVE"):
        return
    for name in {var for provider in providers() for var in provider.key_vars}:
        os.environ.pop(name, None)


_clear_provider_keys()
