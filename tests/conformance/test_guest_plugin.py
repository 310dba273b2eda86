"""xpeval's pytest plugin in someone else's project: nothing happens unless the host asks, and
what it asks for is scoped to the host's adapters (issue 20, "A good guest in the host's pytest")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conformance._host import (
    checks_per_adapter,
    conformance_nodes,
    install_plugins,
    run_pytest,
    with_site,
    write_host,
)


def test_a_hosts_own_adapter_id_tests_run_unchanged_and_nothing_of_xpeval_is_collected(
    tmp_path: Path,
) -> None:
    host = write_host(tmp_path)
    ran = run_pytest(host, "tests")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "3 passed" in ran.stdout
    collected = run_pytest(host, "--collect-only", "tests")
    assert conformance_nodes(collected.stdout) == []


def test_the_conformance_run_covers_only_the_projects_adapters(tmp_path: Path) -> None:
    host = write_host(tmp_path, table='adapters = ["mimo"]')
    collected = run_pytest(host, "--xpeval-conformance", "--collect-only")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    counts = checks_per_adapter(collected.stdout, ["mimo"])
    assert counts["mimo"] > 30 and counts["other"] == 0, counts
    assert "test_host.py::test_parametrizes_adapter_id_itself[host-a]" in collected.stdout


def test_xpeval_adapters_overrides_the_projects_list(tmp_path: Path) -> None:
    host = write_host(tmp_path, table='adapters = ["mimo"]')
    collected = run_pytest(
        host, "--xpeval-conformance", "--xpeval-adapters", "moonshot,vertex-ai", "--collect-only"
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    counts = checks_per_adapter(collected.stdout, ["moonshot", "vertex-ai", "mimo"])
    assert counts["moonshot"] == counts["vertex-ai"] > 30 and counts["mimo"] == 0 and counts["other"] == 0


@pytest.mark.parametrize(
    ("table", "flags", "named"),
    [
        ('adapters = ["mimo", "mimmo"]', (), "[tool.xpeval] adapters names unknown adapter(s) mimmo"),
        (
            None,
            ("--xpeval-adapters", "openai-chat,opanai-chat"),
            "--xpeval-adapters names unknown adapter(s) opanai-chat",
        ),
    ],
    ids=["project", "flag"],
)
def test_an_unknown_adapter_in_scope_stops_the_run_naming_it(
    tmp_path: Path, table: str | None, flags: tuple[str, ...], named: str
) -> None:
    host = write_host(tmp_path, table=table)
    ran = run_pytest(host, "--xpeval-conformance", *flags)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert named in ran.stderr and "Traceback" not in ran.stderr


@pytest.mark.slow
def test_an_adapter_declaring_only_auto_passes_conformance_and_a_factory_ignoring_its_url_fails_it(
    tmp_path: Path,
) -> None:
    host = write_host(tmp_path, guest_adapters=True)
    good = run_pytest(
        host, "--xpeval-conformance", "--xpeval-adapters", "guest-auto-only", "-p", "no:randomly"
    )
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-2000:]
    assert "IndexError" not in good.stdout
    bad = run_pytest(
        host, "--xpeval-conformance", "--xpeval-adapters", "guest-fixed-url", "-k", "provider_data"
    )
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "1 failed, 2 passed" in bad.stdout
    assert (
        "guest-fixed-url: $GUEST_FIXED_BASE_URL was set, the request went to https://api.guest-fixed.invalid"
        in bad.stdout
    )


@pytest.mark.slow
def test_a_refused_or_duplicate_plugin_fails_the_conformance_run_naming_it(tmp_path: Path) -> None:
    host = write_host(tmp_path / "host", table='adapters = ["mimo"]')
    site = install_plugins(
        tmp_path / "site", {"not-an-entry": '"a string"', "openai-chat": 'registry.ADAPTER_REGISTRY["mimo"]'}
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    plain = run_pytest(host, "tests", env=env)
    assert plain.returncode == 0, plain.stdout + plain.stderr  # nothing asked of xpeval: no verdict
    ran = run_pytest(host, "--xpeval-conformance", env=env)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    (line,) = [line for line in ran.stderr.splitlines() if "refused adapter plugin" in line]
    # Each named by its entry point and distribution, and why.
    assert "plugin not-an-entry = host_plugins:NOT_AN_ENTRY of host-plugins refused: it names a str" in line
    assert (
        "plugin openai-chat = host_plugins:OPENAI_CHAT of host-plugins refused: "
        "openai-chat is one of xpeval's own" in line
    )


def test_a_plugin_that_exits_changes_a_builtin_or_shares_its_id_fails_the_conformance_run(
    tmp_path: Path,
) -> None:
    """Each of these used to leave the conformance run green: the plugin's `sys.exit(0)` ended it
    quietly, a replaced built-in was checked as if it were xpeval's, the last of two won."""
    host = write_host(tmp_path / "host", table='adapters = ["mimo"]')
    site = tmp_path / "site"
    install_plugins(site, {"quitter": "None"}, distribution="exits", prelude="import sys\nsys.exit(0)\n")
    mutates = 'object.__setattr__(registry.ADAPTER_REGISTRY["mimo"], "description", "changed")\n'
    install_plugins(site, {"tidy": "None"}, distribution="tamper", prelude=mutates)
    for name in ("alpha", "beta"):
        install_plugins(site, {"twin": 'registry.ADAPTER_REGISTRY["mimo"]'}, distribution=name)
    ran = run_pytest(host, "--xpeval-conformance", env=with_site(site))
    assert ran.returncode == 4, ran.stdout + ran.stderr
    (line,) = [line for line in ran.stderr.splitlines() if "refused adapter plugin" in line]
    assert "plugin quitter = exits:QUITTER of exits refused: called sys.exit(0) while loading" in line
    assert (
        "plugin tidy = tamper:TIDY of tamper refused: changed the adapter registry while loading: mimo"
        in line
    )
    assert "plugin twin of alpha and beta refused: each offers the id twin" in line
