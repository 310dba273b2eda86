"""Every wire, xpeval's own and a plugin's alike, exists only through the one registration path:
a `WirePlugin` named in `catalog.BUNDLED_WIRES` (or a plugin's entry point) and registered by
`register_wire` (adapters/wires/RULES.md, "Adding a wire"). Checked in fresh interpreters: the
catalog is process state, and the registry loads it at import."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from xpeval.adapters.wires import catalog

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_every_wire_and_every_acceptance_mode_came_through_register_wire() -> None:
    found = _run(
        "import json\n"
        "from xpeval.adapters.wires import catalog\n"
        "seen = []\n"
        "_register = catalog.register_wire\n"
        "def recording(plugin, **kw):\n"
        "    seen.append(plugin.codec.name)\n"
        "    _register(plugin, **kw)\n"
        "catalog.register_wire = recording\n"
        "import xpeval.adapters.registry\n"
        "from xpeval.adapters.wires import get_wire, wire_names\n"
        "from xpeval.evals.acceptance.checker.layout import modes\n"
        "print(json.dumps({\n"
        "    'seen': seen,\n"
        "    'names': list(wire_names()),\n"
        "    'codecs': all(get_wire(n) is catalog.registered_wire(n).codec for n in wire_names()),\n"
        "    'modes': {m: w for m, (w, _) in modes().items()},\n"
        "    'declared': {m.name: p.codec.name for p in map(catalog.registered_wire, wire_names())\n"
        "                 for m in p.acceptance},\n"
        "}))\n"
    )
    assert found["names"] == found["seen"], "a wire exists that register_wire never saw"
    assert len(catalog.BUNDLED_WIRES) == 7 and found["names"][:7] == [
        "openai-chat",
        "openai-responses",
        "anthropic-messages",
        "google-genai",
        "mistral-chat",
        "cohere-chat",
        "bedrock-converse",
    ]
    assert found["codecs"] is True
    assert found["modes"] == found["declared"], "an acceptance mode exists that no WirePlugin declares"


def test_a_wire_left_off_the_registration_list_exists_nowhere() -> None:
    """Without its registration line the Gemini wire is not known by any other path: its module
    is never imported, none of its acceptance modes exists, and the adapters naming it fail
    closed as naming an unknown wire."""
    found = _run(
        "import json, sys\n"
        "from xpeval.adapters.wires import catalog\n"
        "catalog.BUNDLED_WIRES = tuple(t for t in catalog.BUNDLED_WIRES if '.google:' not in t)\n"
        "from xpeval.adapters import registry\n"
        "try:\n"
        "    registry.ensure_loaded()\n"
        "    error = None\n"
        "except Exception as exc:\n"
        "    error = f'{type(exc).__name__}: {exc}'\n"
        "wires = catalog._WIRES\n"
        "print(json.dumps({\n"
        "    'error': error,\n"
        "    'wires': list(wires),\n"
        "    'modes': [m.name for p in wires.values() for m in p.acceptance],\n"
        "    'imported': 'xpeval.adapters.wires.google' in sys.modules,\n"
        "}))\n"
    )
    assert found["error"] == "RegistryError: Adapter google-genai names an unknown wire: google-genai"
    assert "google-genai" not in found["wires"]
    assert "openai-chat" in found["wires"]
    assert not {"gemini-parameters", "gemini-json-schema"} & set(found["modes"])
    assert found["imported"] is False


def test_no_shipped_module_imports_a_wire_module_the_registration_list_names() -> None:
    """The registration list is the only way in: nothing imports a listed wire's module by
    itself (an if-chain or a lazy import beside the list would be a second path)."""
    listed = {target.partition(":")[0] for target in catalog.BUNDLED_WIRES}
    found: list[str] = []
    for folder in ("adapters", "evals", "xpeval/bundled"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
                else:
                    continue
                found.extend(f"{path.relative_to(REPO)}: {name}" for name in names if name in listed)
    assert found == []


def test_every_wire_xpeval_ships_fills_in_the_one_codec_skeleton() -> None:
    """`Codec.send` (plain or streamed, a failure a value) is every shipped wire's `send`: none
    writes its own skeleton beside it."""
    from xpeval.adapters.wires import get_wire, wire_names
    from xpeval.adapters.wires._base import Codec

    own = [name for name in wire_names() if catalog.is_builtin_wire(name)]
    assert len(own) == len(catalog.BUNDLED_WIRES)
    for name in own:
        codec = get_wire(name)
        assert isinstance(codec, Codec), name
        assert type(codec).send is Codec.send, f"{name} writes its own send"
