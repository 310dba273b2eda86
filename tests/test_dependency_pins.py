"""The hypothesis pin (pyproject: hypothesis < 6.170.10) and the day it can go.

hypothesis 6.170.10+ breaks hypothesis-jsonschema 0.23.1: generating from any object schema
raises `AttributeError: 'many' object has no attribute 'more'` (seen with 6.170.17). What can be
checked offline:

- the installed hypothesis honours the pin, and the pinned pair generates (the fidelity
  measurement depends on it);
- a hypothesis-jsonschema newer than the one the pin was set for is a reason to re-test the pin;
- above the pin (only in a scratch environment: `pip install 'hypothesis>=6.170.10'`, then
  `pytest tests/test_dependency_pins.py`), whether the breakage is still there: if generation
  works, the test fails and says the pin can go.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

PIN = (6, 170, 10)
PINNED_FOR_HYPOTHESIS_JSONSCHEMA = (0, 23, 1)
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
OBJECT_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def _parse(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _generates() -> bool:
    from xpeval.evals.acceptance.fidelity import Unmeasurable, draw_instances

    try:
        return bool(draw_instances(OBJECT_SCHEMA, 3, 5.0))
    except Unmeasurable as exc:
        if "more" in str(exc):  # the known breakage: 'many' object has no attribute 'more'
            return False
        raise


def test_pyproject_still_declares_the_pin() -> None:
    assert '"hypothesis>=6.150,<6.170.10"' in PYPROJECT.read_text(), (
        "the hypothesis pin changed in pyproject.toml: update PIN here and the ecosystem notes"
    )


def test_the_installed_hypothesis_honours_the_pin_and_generates() -> None:
    installed = _parse(version("hypothesis"))
    if installed >= PIN:
        pytest.skip(f"hypothesis {version('hypothesis')} is above the pin: see the test below")
    assert _generates(), "hypothesis-jsonschema cannot generate with the pinned hypothesis"


def test_a_newer_hypothesis_jsonschema_is_a_reason_to_retest_the_pin() -> None:
    installed = _parse(version("hypothesis-jsonschema"))
    assert installed <= PINNED_FOR_HYPOTHESIS_JSONSCHEMA, (
        f"hypothesis-jsonschema {version('hypothesis-jsonschema')} is newer than the 0.23.1 the "
        "hypothesis pin was set for. In a scratch venv: pip install 'hypothesis>=6.170.10' and run "
        "pytest tests/test_dependency_pins.py tests/fidelity; if they pass, drop '<6.170.10' from "
        "pyproject.toml, else raise PINNED_FOR_HYPOTHESIS_JSONSCHEMA here."
    )


def test_above_the_pin_the_breakage_is_still_there() -> None:
    installed = _parse(version("hypothesis"))
    if installed < PIN:
        pytest.skip(
            f"hypothesis {version('hypothesis')} is below the pin; to test a newer one: "
            "pip install 'hypothesis>=6.170.10' in a scratch venv and rerun this file"
        )
    assert not _generates(), (
        f"hypothesis {version('hypothesis')} works with hypothesis-jsonschema "
        f"{version('hypothesis-jsonschema')}: the pin can go (remove '<6.170.10' from pyproject.toml)"
    )
