"""Importing xpeval's modules does nothing but define them: every module imports in any order and
a second time under another name, and nothing is registered until `ensure_loaded()` is called
(docs/plugins.md, "When plugins are loaded").

Each order runs in a fresh interpreter (a module an earlier test imported would hide an order
that fails). The orders are shuffled with a seed each; a failure names its seed, and
`XPEVAL_IMPORT_SEEDS=3,17` plays those orders instead.
"""

from __future__ import annotations

import json
import os
import pkgutil
import random
import subprocess
import sys
from pathlib import Path

import pytest

import xpeval
from tests._corpus import REPO_ROOT

NOT_IMPORTED = {"xpeval.__main__"}
"""Importing `python -m xpeval`'s module is running a command."""

PROBE = """
from xpeval.adapters.providers.openai_compatible import OPENAI_COMPATIBLE
from xpeval.plugin import WrapperEntry

ENTRY = WrapperEntry(contract_parent="openai-chat", provider=OPENAI_COMPATIBLE, description="probe")
"""
"""A plugin adapter: whether its module was imported, and whether its id is registered, says
whether the plugins were loaded."""

SCRIPT = """
import importlib, importlib.util, json, random, sys

names, seed = json.loads(sys.argv[1]), int(sys.argv[2])
random.Random(seed).shuffle(names)
for name in names:
    importlib.import_module(name)
for name in names:  # each module again, as another module of the same files
    spec = importlib.util.find_spec(name)
    second = "second_copy_of_" + name.replace(".", "_")
    search = spec.submodule_search_locations
    copy = importlib.util.spec_from_file_location(second, spec.origin, submodule_search_locations=search)
    module = importlib.util.module_from_spec(copy)
    sys.modules[second] = module
    copy.loader.exec_module(module)

from xpeval.adapters import plugins, registry
from xpeval.adapters.schema import dialects
from xpeval.adapters.wires import catalog

def state():
    return {
        "adapters": sorted(registry.ADAPTER_REGISTRY),
        "wires": sorted(catalog._WIRES),
        "dialects": sorted(dialects.registered_dialects()),
        "refused": [p.line() for p in plugins.refused_plugins()],
        "probe imported": "import_probe" in sys.modules,
    }

at_import = state()
registry.ensure_loaded()
registry.ensure_loaded()
print(json.dumps({"at import": at_import, "loaded": state()}))
"""


def _modules() -> list[str]:
    found = {
        info.name for info in pkgutil.walk_packages(xpeval.__path__, "xpeval.", onerror=lambda name: None)
    }
    return sorted(found - NOT_IMPORTED)


ORDERS = ("seed-0", "seed-1", "fresh-seed")
"""Two orders every run plays, and one drawn afresh each run (its seed printed: an order that
fails once is found again with `XPEVAL_IMPORT_SEEDS`)."""


def _seed(order: str) -> int:
    asked = os.environ.get("XPEVAL_IMPORT_SEEDS")
    if asked:
        seeds = [int(seed) for seed in asked.split(",")]
        return seeds[ORDERS.index(order) % len(seeds)]
    if order == "fresh-seed":
        return random.SystemRandom().randrange(2**32)
    return int(order.removeprefix("seed-"))


def _install_probe(site: Path) -> None:
    site.mkdir()
    (site / "import_probe.py").write_text(PROBE)
    dist = site / "import_probe-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: import-probe\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[xpeval.adapters]\nimport-probe = import_probe:ENTRY\n")


def test_the_walk_finds_the_package_s_modules() -> None:
    modules = _modules()
    assert {"xpeval.adapters.registry", "xpeval.bundled.mistral_chat", "xpeval.evals.cli"} <= set(modules)
    assert len(modules) > 200


@pytest.mark.slow
@pytest.mark.parametrize("order", ORDERS)
def test_every_module_imports_in_any_order_and_twice_and_nothing_registers_until_ensure_loaded(
    tmp_path: Path, order: str
) -> None:
    seed = _seed(order)
    print(f"import order seed: {seed} (XPEVAL_IMPORT_SEEDS={seed} plays it again)")
    _install_probe(tmp_path / "site")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XPEVAL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(REPO_ROOT)])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(_modules()), str(seed)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"seed {seed}: {done.stderr[-3000:]}"
    found = json.loads(done.stdout.splitlines()[-1])
    at_import, loaded = found["at import"], found["loaded"]
    assert not at_import["probe imported"], f"seed {seed}: importing xpeval imported a plugin"
    assert at_import["wires"] == [], f"seed {seed}: wires registered at import: {at_import['wires']}"
    assert not {"mistral", "cohere", "bedrock-converse", "import-probe"} & set(at_import["adapters"]), (
        f"seed {seed}: adapters registered at import: {at_import['adapters']}"
    )
    assert at_import["dialects"] == [d for d in loaded["dialects"] if d in at_import["dialects"]]
    assert "mistral" not in at_import["dialects"], f"seed {seed}: a plugin's dialect registered at import"
    # ensure_loaded() is what registers them: xpeval's bundled adapters and wires, then plugins'
    assert {"mistral", "cohere", "bedrock-converse", "import-probe"} <= set(loaded["adapters"])
    assert {"mistral-chat", "cohere-chat", "bedrock-converse"} <= set(loaded["wires"])
    assert loaded["probe imported"] and loaded["refused"] == []


LOOKUPS = """
import sys, threading
from xpeval.adapters.wires import get_wire
assert get_wire("mistral-chat").name == "mistral-chat"  # xpeval's own wires: on first use
registry = sys.modules.get("xpeval.adapters.registry")  # imported by the bundled modules, not loaded
assert "import_probe" not in sys.modules and (registry is None or "mistral" not in registry.ADAPTER_REGISTRY)
from xpeval.adapters import get_entry
assert get_entry("import-probe").description == "probe"  # a lookup loads the plugins
from xpeval.adapters import registry
threads = [threading.Thread(target=registry.ensure_loaded) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert registry.distribution_of("import-probe") == "import-probe"
assert registry.distribution_of("mistral") == "xpeval" == registry.distribution_of("openai-chat")
print("ok")
"""

FAILED_LOAD = """
from xpeval.adapters import registry
from xpeval.adapters.wires import catalog
{break_it}
for attempt in range(2):
    try:
        {look_up}
    except Exception as exc:
        print(type(exc).__name__, exc)
"""
BROKEN = {
    "adapters": (
        'registry.BUNDLED_ADAPTERS["broken"] = "xpeval.bundled.mistral_chat:NO_SUCH_ENTRY"',
        'registry.get_entry("mistral")',
        "RuntimeError xpeval's adapters failed to load: AttributeError",
    ),
    "wires": (
        'catalog.BUNDLED_WIRES = (*catalog.BUNDLED_WIRES, "xpeval.bundled.mistral_chat:NO_SUCH_ENTRY")',
        'catalog.registered_wire("mistral-chat")',
        "RuntimeError xpeval's own wires failed to register: AttributeError",
    ),
}


def _python(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    if not (tmp_path / "site").exists():
        _install_probe(tmp_path / "site")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XPEVAL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(REPO_ROOT)])
    return subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_wire_or_registry_lookup_loads_what_it_needs_once_from_any_thread(tmp_path: Path) -> None:
    done = _python(tmp_path, LOOKUPS)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize(("break_it", "look_up", "again_said"), list(BROKEN.values()), ids=list(BROKEN))
def test_a_load_that_failed_fails_every_later_lookup_rather_than_leave_a_partial_registry(
    tmp_path: Path, break_it: str, look_up: str, again_said: str
) -> None:
    done = _python(tmp_path, FAILED_LOAD.format(break_it=break_it, look_up=look_up))
    first, again = done.stdout.strip().splitlines()
    assert first.startswith("AttributeError") and "NO_SUCH_ENTRY" in first, done.stdout
    assert again.startswith(again_said), done.stdout
