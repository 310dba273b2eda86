"""The adapter registry is the single authority and fails closed on anything it does not know."""

from __future__ import annotations

import json
import re
import secrets

import pytest

from tests._cli import Cli
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.providers import openai
from xpeval.adapters.registry import (
    ADAPTER_REGISTRY,
    DirectEntry,
    WrapperEntry,
    create_adapter,
    effective_contract,
    get_entry,
    register_adapter,
    unregister_adapter,
    validate_registry,
)
from xpeval.adapters.wires import wire_names
from xpeval.errors import RegistryError, UnknownAdapterError


def test_every_wrapper_resolves_to_a_direct_wire(xpeval_adapter_id: str) -> None:
    contract = effective_contract(xpeval_adapter_id)
    assert contract.wire in wire_names()
    assert isinstance(ADAPTER_REGISTRY[contract.chain[-1]], DirectEntry)
    assert contract.chain[0] == xpeval_adapter_id


def test_the_shipped_registry_has_six_direct_and_six_wrapper_adapters_one_per_wire() -> None:
    kinds = [entry.kind for entry in ADAPTER_REGISTRY.values()]
    assert kinds.count("direct") >= 6 and kinds.count("wrapper") >= 6
    assert {effective_contract(i).wire for i in ADAPTER_REGISTRY} == set(wire_names())
    assert {"openai-chat", "openai-responses", "anthropic-messages", "google-genai"} <= set(wire_names())
    assert {"mistral-chat", "cohere-chat", "bedrock-converse"} <= set(wire_names())


def test_each_adapter_constructs_with_its_own_factory(xpeval_adapter_id: str) -> None:
    adapter = create_adapter(xpeval_adapter_id, AdapterSettings(model="m"))
    assert adapter.id == xpeval_adapter_id
    assert adapter.contract == effective_contract(xpeval_adapter_id)


@pytest.mark.parametrize(
    "bad", ["nope", "", " openai-chat", "OPENAI-CHAT", "__class__", "toString", "constructor"]
)
def test_unknown_ids_fail_with_unknown_adapter(bad: str) -> None:
    with pytest.raises(UnknownAdapterError, match=f"^Unknown adapter: {re.escape(bad)} \\(.*known: "):
        effective_contract(bad)
    with pytest.raises(UnknownAdapterError):
        get_entry(bad)
    with pytest.raises(UnknownAdapterError):
        create_adapter(bad)


def test_a_non_string_id_is_unknown_not_a_crash() -> None:
    with pytest.raises(UnknownAdapterError):
        get_entry(["openai-chat"])  # type: ignore[arg-type]


def test_unknown_parent_fails_closed() -> None:
    registry = {"child": WrapperEntry(contract_parent="ghost", provider=openai.OPENAI, factory=openai.create)}
    with pytest.raises(UnknownAdapterError, match="Unknown adapter: ghost"):
        effective_contract("child", registry)
    with pytest.raises(UnknownAdapterError):
        validate_registry(registry)


def test_contract_cycle_fails_closed() -> None:
    registry = {
        "a": WrapperEntry(contract_parent="b", provider=openai.OPENAI, factory=openai.create),
        "b": WrapperEntry(contract_parent="c", provider=openai.OPENAI, factory=openai.create),
        "c": WrapperEntry(contract_parent="a", provider=openai.OPENAI, factory=openai.create),
    }
    with pytest.raises(RegistryError, match="cycle: a -> b -> c -> a"):
        effective_contract("a", registry)


def test_self_parent_is_a_cycle() -> None:
    registry = {"me": WrapperEntry(contract_parent="me", provider=openai.OPENAI, factory=openai.create)}
    with pytest.raises(RegistryError, match="cycle"):
        validate_registry(registry)


def test_a_wrapper_inherits_the_dialect_unless_it_overrides_it() -> None:
    assert effective_contract("mimo").schema_dialect == effective_contract("openai-chat").schema_dialect
    assert effective_contract("moonshot").schema_dialect == "moonshot"
    assert effective_contract("vertex-ai").schema_dialect == "gemini-openapi"


def test_registering_a_broken_entry_leaves_the_registry_untouched() -> None:
    before = dict(ADAPTER_REGISTRY)
    with pytest.raises(UnknownAdapterError):
        register_adapter(
            "broken", WrapperEntry(contract_parent="ghost", provider=openai.OPENAI, factory=openai.create)
        )
    assert before == ADAPTER_REGISTRY


def test_register_and_unregister_round_trip() -> None:
    register_adapter(
        "tmp-wrapper",
        WrapperEntry(contract_parent="anthropic-messages", provider=openai.OPENAI, factory=openai.create),
    )
    try:
        assert effective_contract("tmp-wrapper").wire == "anthropic-messages"
    finally:
        unregister_adapter("tmp-wrapper")
    assert "tmp-wrapper" not in ADAPTER_REGISTRY


def test_adapters_json_lists_every_registered_id_with_exactly_the_documented_keys(cli: Cli) -> None:
    done = cli("adapters", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["id"] for r in rows] == list(ADAPTER_REGISTRY)
    for row in rows:
        assert set(row) == {"id", "kind", "wire", "contract_parent", "distribution"}
        assert row["wire"] in wire_names()
        assert (row["kind"] == "direct") == (row["contract_parent"] is None)


@pytest.mark.parametrize("args", [["adapters"], ["adapters", "--capabilities"]])
def test_adapters_table_piped_shows_every_id_and_wire_whole(cli: Cli, args: list[str]) -> None:
    """Captured output has no terminal width; rich's 80-column default elided the ids
    (`openai-respon…`), which is what a CI log or `| grep` then showed."""
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    cells = {cell.strip() for line in done.stdout.splitlines() for cell in line.split("│")}
    for adapter_id in ADAPTER_REGISTRY:
        assert adapter_id in cells
        assert effective_contract(adapter_id).wire in cells


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--adapters", "nope"],
        ["run", "--adapters", "openai-chat,nope"],
        ["run", "--models", "nope=gpt-x"],
        ["schemas", "--adapters", "nope"],
    ],
    ids=["run-adapters", "run-adapter-list", "run-models", "schemas-adapters"],
)
def test_unknown_adapter_on_the_command_line_exits_nonzero_without_a_traceback(
    cli: Cli, args: list[str]
) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert "Unknown adapter: nope" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_adapter_is_live_ready_only_with_its_provider_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not create_adapter("anthropic-messages").live_ready
    # Made at run time so no credential-shaped literal sits in the repository.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "-".join(("sk", "ant", secrets.token_hex(12))))
    assert create_adapter("anthropic-messages").live_ready
    assert not create_adapter("openai-chat").live_ready


def test_a_wrapper_without_a_factory_is_built_by_its_parents_from_its_own_provider_data() -> None:
    """A wrapper holds only what differs: with no factory of its own, the parent's builds its
    client from the wrapper's URL and key variable (docs/plugins.md, "A wrapper")."""
    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.providers._spec import Provider
    from xpeval.adapters.registry import WrapperEntry, create_adapter, register_adapter, unregister_adapter

    acme = Provider(
        name="acme",
        default_model="acme-large",
        key_vars=("ACME_TEST_KEY",),
        default_base_url="https://api.acme.example/v1",
    )
    register_adapter("acme-test", WrapperEntry(contract_parent="openai-chat", provider=acme))
    try:
        adapter = create_adapter("acme-test", AdapterSettings())
        assert adapter.contract.wire == "openai-chat" and adapter.provider is acme
        assert str(adapter.client.base_url).rstrip("/") == "https://api.acme.example/v1"
    finally:
        unregister_adapter("acme-test")


def test_the_capability_matrix_shows_the_reasoning_state_each_adapter_declares(cli: Cli) -> None:
    done = cli("adapters", "--capabilities", "--json")
    assert done.returncode == 0, done.stderr
    declared = {row["id"]: row["reasoning_state"] for row in json.loads(done.stdout)}
    assert declared == {
        adapter_id: sorted(effective_contract(adapter_id).capabilities.reasoning_state)
        for adapter_id in ADAPTER_REGISTRY
    }
    assert declared["openai-responses"] == ["reasoning_items"]
    assert declared["moonshot"] == ["reasoning_content"] and declared["bedrock-converse"] == [
        "reasoning_blocks"
    ]
    table = cli("adapters", "--capabilities").stdout
    row = next(line for line in table.splitlines() if "│ google-genai " in line)
    assert "thought_signatures" in row and "[a-zA-Z0-9]{8}" in row
    handoff = {row["id"]: row["handoff_call_ids"] for row in json.loads(done.stdout)}
    assert handoff["mistral"] == "[a-zA-Z0-9]{9}" and handoff["cohere"] is None
