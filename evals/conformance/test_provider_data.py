"""What an adapter's provider data says is what its client does: the base URL variable decides
where requests go, the key variable is the key sent, and the headers that carry it never reach
a recording. A wrapper adds nothing but provider data, so these are the checks that look at it.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import TurnResult
from xpeval.adapters.providers._spec import Provider
from xpeval.adapters.registry import create_adapter, provider_of
from xpeval.evals.cassettes.binding import bind_cassette
from xpeval.evals.cassettes.meta import Mode
from xpeval.evals.cassettes.store import CassetteStore
from xpeval.evals.conformance._fixtures import request, wire_of
from xpeval.evals.emulator import Reply, ScriptedTransport

BASE_PATH = "/xpeval-provider-data"


def _configured(provider: Provider, monkeypatch: pytest.MonkeyPatch) -> str:
    """A made-up key in the provider's first key variable, and its base URL variable (if any)
    pointed at a loopback address; returns the key."""
    if not provider.key_vars:
        pytest.skip(f"{provider.name} reads no key variable")
    key = f"sk-test-{secrets.token_hex(16)}"
    for name in provider.key_vars:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(provider.key_vars[0], key)
    if provider.base_url_var:
        monkeypatch.setenv(provider.base_url_var, f"http://127.0.0.1:9{BASE_PATH}")
    return key


def _one_turn(adapter_id: str, transport: ScriptedTransport | None = None) -> ScriptedTransport:
    script = transport or ScriptedTransport(wire_of(adapter_id), [Reply(result=TurnResult(text="ok"))])

    async def go() -> None:
        adapter = create_adapter(adapter_id, AdapterSettings(transport=script.transport(), timeout=10.0))
        result = await adapter.turn(request())
        await adapter.aclose()
        assert result.error is None, result.error

    asyncio.run(go())
    return script


def test_requests_go_to_the_base_url_variable(
    xpeval_adapter_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = provider_of(xpeval_adapter_id)
    if not provider.base_url_var:
        pytest.skip(f"{provider.name} states no base URL variable")
    _configured(provider, monkeypatch)
    (sent,) = _one_turn(xpeval_adapter_id).requests
    assert (sent.url.host, sent.url.port) == ("127.0.0.1", 9) and sent.url.path.startswith(BASE_PATH), (
        f"{xpeval_adapter_id}: ${provider.base_url_var} was set, the request went to {sent.url}"
    )


def test_the_key_variable_is_the_key_sent(xpeval_adapter_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = provider_of(xpeval_adapter_id)
    key = _configured(provider, monkeypatch)
    (sent,) = _one_turn(xpeval_adapter_id).requests
    carried = [name for name, value in sent.headers.items() if key in value]
    assert carried or key in str(sent.url), (
        f"{xpeval_adapter_id}: ${provider.key_vars[0]} was set, no header or query of the request carries it"
    )
    undeclared = [
        name for name in carried if name.lower() not in {h.lower() for h in provider.secret_headers}
    ]
    assert not undeclared, (
        f"{xpeval_adapter_id}: the key travels in {undeclared}, which Provider.secret_headers does not "
        "name (so nothing scrubs it)"
    )


def test_no_secret_header_reaches_a_recording(
    xpeval_adapter_id: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    provider = provider_of(xpeval_adapter_id)
    key = _configured(provider, monkeypatch)
    store = CassetteStore(tmp_path / "cassettes")
    upstream = ScriptedTransport(wire_of(xpeval_adapter_id), [Reply(result=TurnResult(text="ok"))])

    async def record() -> list[str]:
        bound = bind_cassette(
            store,
            xpeval_adapter_id,
            "provider_data",
            Mode.RECORD,
            source="emulated",
            model="test-model",
            upstream=upstream.transport(),
        )
        adapter = create_adapter(
            xpeval_adapter_id, AdapterSettings(model="test-model", transport=bound.transport, timeout=10.0)
        )
        result = await adapter.turn(request())
        await adapter.aclose()
        assert result.error is None, result.error
        return bound.finish(succeeded=True)

    assert asyncio.run(record()) == []
    (sent,) = upstream.requests
    recorded = store.path(xpeval_adapter_id, "provider_data", "test-model").read_text(encoding="utf-8")
    assert key not in recorded, (
        f"{xpeval_adapter_id}: the key from ${provider.key_vars[0]} is in the recording"
    )
    for name in provider.secret_headers:
        value = sent.headers.get(name)
        if value:
            assert value not in recorded, f"{xpeval_adapter_id}: secret header {name} is in the recording"
