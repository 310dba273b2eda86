"""The plugin API (`xpeval.plugin`) changes only with `PLUGIN_API_VERSION`: its surface (names,
signatures, class members; `tests/_plugin_api_surface.py`) must equal the committed snapshot taken
at the current version, and a plugin's required version is judged by semver-minor rules."""

from __future__ import annotations

import difflib

import pytest

from tests import _plugin_api_surface as api
from xpeval.plugin import PLUGIN_API_VERSION, compatible


def test_the_plugin_api_surface_is_the_snapshot_of_its_version() -> None:
    recorded_version, recorded = api.read_snapshot()
    now = api.surface()
    diff = "\n".join(difflib.unified_diff(recorded, now, "snapshot", "xpeval.plugin", lineterm="", n=0))
    if recorded_version == api.current_version():
        assert now == recorded, (
            f"xpeval.plugin's surface changed without PLUGIN_API_VERSION changing "
            f"(still {recorded_version}): raise it in xpeval/plugin.py (minor: only added; major: "
            f"removed or changed), then refresh the snapshot with `{api.REFRESH}`\n{diff}"
        )
    else:
        assert now == recorded, (
            f"PLUGIN_API_VERSION is {api.current_version()}, the snapshot was taken at "
            f"{recorded_version}: refresh it with `{api.REFRESH}`\n{diff}"
        )
    assert recorded_version == api.current_version(), f"refresh the snapshot with `{api.REFRESH}`"


def test_every_export_is_in_the_snapshot_as_type_checkers_see_it() -> None:
    assert not [line for line in api.surface() if "not visible to type checkers" in line]


OLD = ["class WirePlugin", "    codec: Wire", "def register_wire(plugin: WirePlugin) -> None"]


@pytest.mark.parametrize(
    ("new_version", "new", "refused_because"),
    [
        ("1.2", OLD, None),
        ("1.2", [*OLD, "def wire_names() -> tuple[str, ...]"], "still 1.2"),
        ("1.3", [*OLD, "def wire_names() -> tuple[str, ...]"], None),
        ("1.3", OLD[:2], "under a minor step"),
        ("1.3", [*OLD[:2], "def register_wire(plugin: WirePlugin, *, strict: bool) -> None"], "minor step"),
        ("1.3", [*OLD[:2], "def register_wire(plugin: WirePlugin, strict: bool) -> None"], "minor step"),
        # a parameter added last with a default: every old call still works
        (
            "1.3",
            [*OLD[:2], "def register_wire(plugin: WirePlugin, batch: dict[str, int] = {}) -> None"],
            None,
        ),
        ("2.0", OLD[:2], None),
        ("1.1", [*OLD, "def wire_names() -> tuple[str, ...]"], "still 1.1"),
    ],
)
def test_the_snapshot_refresh_refuses_a_change_the_version_step_does_not_allow(
    new_version: str, new: list[str], refused_because: str | None
) -> None:
    why = api.refusal("1.2", OLD, new_version, new)
    if refused_because is None:
        assert why is None
    else:
        assert why is not None and refused_because in why


@pytest.mark.parametrize(
    ("required", "provided", "expected"),
    [
        ("1.2", (1, 2), True),
        ("1.1", (1, 2), True),  # a minor step only adds: what 1.1 used is still there
        ("1", (1, 2), True),
        (" 1.0 ", (1, 2), True),
        ("1.3", (1, 2), False),  # it needs a name 1.2 does not have
        ("2.0", (1, 2), False),  # a major step removed or changed names
        ("0.9", (1, 2), False),
        ("1.10", (1, 9), False),  # numbers, not text
        ("1.9", (1, 10), True),
    ],
)
def test_a_plugin_is_compatible_with_the_same_major_and_at_least_its_minor(
    required: str, provided: tuple[int, int], expected: bool
) -> None:
    assert compatible(required, provided) is expected


def test_compatibility_defaults_to_this_xpevals_plugin_api() -> None:
    major, minor = PLUGIN_API_VERSION
    assert compatible(f"{major}.{minor}")
    assert not compatible(f"{major}.{minor + 1}")
    assert not compatible(f"{major + 1}")


@pytest.mark.parametrize("required", ["", "one", "1.x", "v1.2", "1.2.3", "-1", "1."])
def test_a_malformed_required_version_is_a_one_line_error(required: str) -> None:
    with pytest.raises(ValueError, match=r"is not MAJOR\.MINOR"):
        compatible(required)
