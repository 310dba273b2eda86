"""The handoff family's sources (xpeval/evals/conformance/test_handoff.py) are named without
asking the registry, so importing the suite registers nothing; here they are held to the adapters
that own xpeval's wires."""

from __future__ import annotations

from xpeval.adapters.registry import direct_adapter_for_wire
from xpeval.evals.conformance._fixtures import wire_of
from xpeval.evals.conformance.test_handoff import SOURCES


def test_the_handoff_sources_are_each_wires_own_adapter() -> None:
    assert [direct_adapter_for_wire(wire_of(source).name) for source in SOURCES] == list(SOURCES)
