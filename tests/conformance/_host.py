"""A host project in a temporary folder, and pytest run there the way its developers run it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import xpeval.evals.conformance

CONFORMANCE = Path(xpeval.evals.conformance.__file__).parent

HOST_TEST = textwrap.dedent("""
    import pytest


    @pytest.fixture
    def adapter_id() -> str:
        return "the-hosts-own-adapter"


    def test_takes_the_hosts_own_adapter_id_fixture(adapter_id):
        assert adapter_id == "the-hosts-own-adapter"


    @pytest.mark.parametrize("adapter_id", ["host-a", "host-b"])
    def test_parametrizes_adapter_id_itself(adapter_id):
        assert adapter_id.startswith("host-")
""")

GUEST_ADAPTERS = textwrap.dedent('''
    """Adapters this host registers in-process: real wrappers of openai-chat with their own provider data."""
    from xpeval.adapters.adapter import Capabilities
    from xpeval.adapters.providers import openai
    from xpeval.adapters.providers._spec import Provider
    from xpeval.adapters.registry import WrapperEntry, register_adapter

    GUEST = Provider(
        name="guest",
        default_model="guest-1",
        key_vars=("GUEST_API_KEY",),
        base_url_var="GUEST_BASE_URL",
        default_base_url="https://api.guest.invalid/v1",
    )
    register_adapter(
        "guest-auto-only",
        WrapperEntry(
            contract_parent="openai-chat",
            provider=GUEST,
            factory=openai.create,
            capabilities=Capabilities(tool_choice=frozenset({"auto"})),
            description="sends tool_choice auto only",
        ),
    )


    def _ignores_the_base_url_variable(contract, provider, settings):
        from dataclasses import replace

        return openai.create(contract, replace(provider, base_url_var=None), settings)


    register_adapter(
        "guest-fixed-url",
        WrapperEntry(
            contract_parent="openai-chat",
            provider=Provider(
                name="guest-fixed",
                default_model="guest-1",
                key_vars=("GUEST_FIXED_API_KEY",),
                base_url_var="GUEST_FIXED_BASE_URL",
                default_base_url="https://api.guest-fixed.invalid/v1",
            ),
            factory=_ignores_the_base_url_variable,
            description="states a base URL variable its factory never reads",
        ),
    )
''')


def write_host(root: Path, *, table: str | None = None, guest_adapters: bool = False) -> Path:
    """A project with its own `tests/` (a test taking `adapter_id`), optionally `[tool.xpeval]`."""
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_host.py").write_text(HOST_TEST)
    pyproject = '[project]\nname = "host"\nversion = "0"\n'
    if table is not None:
        pyproject += f"\n[tool.xpeval]\n{table}\n"
    (root / "pyproject.toml").write_text(pyproject)
    if guest_adapters:
        (root / "conftest.py").write_text(GUEST_ADAPTERS)
    return root


def run_pytest(
    root: Path,
    *args: str,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """pytest in a process of its own in `root`: the host has its own `tests` package (and in
    tests/packaging its own `evals` and `adapters`), names this repository's test process has
    imported already, and the host's plugins and registrations must not reach this process."""
    environ = {
        k: v for k, v in (env if env is not None else os.environ).items() if k != "XPEVAL_CASSETTE_MODE"
    }
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=root, env=environ, timeout=timeout)


def conformance_nodes(output: str) -> list[str]:
    """The node ids of xpeval's conformance checks in `pytest --collect-only -q` output."""
    # Outside the host's root pytest names a node by its file name alone, so the files are matched.
    shipped = {path.name for path in CONFORMANCE.glob("test_*.py")}
    return [line for line in output.splitlines() if Path(line.split("::", 1)[0]).name in shipped]


def checks_per_adapter(output: str, adapters: list[str]) -> dict[str, int]:
    """How many collected conformance checks name each adapter in their parameters (the ids
    given must not be substrings of one another); "other" counts checks naming none of them."""
    counts = dict.fromkeys([*adapters, "other"], 0)
    for node in conformance_nodes(output):
        params = node.rsplit("[", 1)[-1]
        named = [adapter for adapter in adapters if adapter in params]
        counts[named[0] if len(named) == 1 else "other"] += 1
    return counts


def install_plugins(
    site: Path, entries: dict[str, str], *, distribution: str = "host-plugins", prelude: str = ""
) -> Path:
    """A distribution `distribution` offering `entries` (adapter id -> Python expression for its
    registry entry) through the `xpeval.adapters` entry-point group, importable from `site` (put
    it on PYTHONPATH). Its module runs `prelude` first, as a plugin's import would (several
    distributions may share one `site`)."""
    site.mkdir(parents=True, exist_ok=True)
    module = distribution.replace("-", "_")
    lines = [f"{adapter_id.upper().replace('-', '_')} = {value}" for adapter_id, value in entries.items()]
    header = "from xpeval.adapters import registry\n"  # values may name registry's entries
    (site / f"{module}.py").write_text(header + textwrap.dedent(prelude) + "\n" + "\n".join(lines) + "\n")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    points = [f"{a} = {module}:{a.upper().replace('-', '_')}" for a in entries]
    (info / "entry_points.txt").write_text("[xpeval.adapters]\n" + "\n".join(points) + "\n")
    return site


def with_site(site: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this environment) with `site` first on PYTHONPATH, this checkout after it."""
    environ = dict(os.environ if env is None else env)
    environ.pop("XPEVAL_CASSETTE_MODE", None)
    rest = environ.get("PYTHONPATH", "")
    environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(site), rest] if p)
    return environ
