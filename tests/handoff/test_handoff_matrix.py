"""The handoff matrix: every recorded multi-turn conversation continued through every registered
adapter passes the target's request validation, schema checker and strict emulator, or names the
rule that makes the pair impossible; the README shows the matrix the command produces now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._cli import Cli
from tests._corpus import CORPUS, REPO_ROOT, SKIP_REASON
from xpeval.adapters.contract import AssistantMessage, Message
from xpeval.adapters.registry import adapter_ids
from xpeval.adapters.wires.handoff import HANDOFF_RULES, Handoff, Party
from xpeval.adapters.wires.handoff_ids import map_call_ids
from xpeval.evals.handoff import matrix as matrix_module
from xpeval.evals.handoff.conversations import RecordedConversation, load_conversation
from xpeval.evals.handoff.matrix import handoff_matrix, recorded_conversations
from xpeval.evals.handoff.report import matrix_report

README = REPO_ROOT / "README.md"
CORPORA = (CORPUS / "cassettes", CORPUS / "new-wires")
README_BLOCK = re.compile(
    r"<!-- handoff-matrix: (?P<command>[^>]*) -->\n(?P<table>.*?)\n<!-- /handoff-matrix -->", re.S
)
THINKING_RECORDING = (
    "anthropic-messages/llm-anthropic__test_fixed_version_tool_chain_with_thinking_display_regression.yaml"
)


def _committed(per_source: int = 1) -> list[RecordedConversation]:
    found = recorded_conversations(REPO_ROOT / "cassettes", [], adapter_ids(), per_source)
    return [c for c in found if isinstance(c, RecordedConversation)]


def test_the_readme_shows_the_matrix_the_command_produces_now() -> None:
    if not CORPUS.exists():
        pytest.skip(SKIP_REASON)
    block = README_BLOCK.search(README.read_text(encoding="utf-8"))
    assert block is not None, "README.md has no <!-- handoff-matrix: ... --> block"
    assert block["command"] == (
        "xpeval handoff --corpus ../shared/corpus/cassettes --corpus ../shared/corpus/new-wires --markdown"
    )
    report = matrix_report(REPO_ROOT / "cassettes", list(CORPORA), per_source=3)
    assert block["table"] == report.markdown(), (
        "regenerate the README's handoff matrix with the command it names"
    )
    figures = report.matrix.figures()
    assert figures["fail"] == 0 and figures["conversations"] >= 5
    assert figures["pairs"] == len(adapter_ids()) ** 2


def test_every_ordered_pair_of_registered_adapters_passes_or_names_its_rule() -> None:
    conversations = _committed()
    adapters = adapter_ids()
    assert {c.source for c in conversations} == set(adapters), (
        "a committed multi-turn conversation per adapter"
    )
    matrix = handoff_matrix(conversations, adapters)
    assert not matrix.failed, [(o.source, o.target, o.rule, o.detail) for o in matrix.failed]
    for (source, target), cell in matrix.cells().items():
        assert cell == "pass" or set(cell.split(", ")) <= set(HANDOFF_RULES), (source, target, cell)
    # Every pair a conversation's own adapter continues, and every target without thinking, passes.
    assert all(matrix.cell(a, a) == "pass" for a in adapters)


def _ids_only(messages: list[Message], source: Party, target: Party) -> Handoff:
    mapped, ids = map_call_ids(messages, target.wire)
    return Handoff(messages=mapped, call_ids=ids, decisions=())


def test_a_conversion_that_keeps_foreign_state_as_it_is_fails_the_strict_emulator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(matrix_module, "hand_off", _ids_only)
    conversations = [c for c in _committed() if c.source == "openai-chat"]
    matrix = handoff_matrix(conversations, ["openai-chat", "google-genai", "moonshot", "anthropic-messages"])
    failed = {(o.target, o.rule) for o in matrix.failed}
    # Gemini refuses foreign calls without a signature, Kimi tool turns without reasoning_content,
    # Claude with thinking on a foreign pending loop: the emulator judges, not the conversion.
    assert failed == {
        ("google-genai", "strict-emulator"),
        ("moonshot", "strict-emulator"),
        ("anthropic-messages", "strict-emulator"),
    }


def test_a_real_recording_with_thinking_keeps_it_through_its_own_adapter_and_loses_it_elsewhere() -> None:
    path = CORPUS / "cassettes" / THINKING_RECORDING
    if not path.exists():
        pytest.skip(SKIP_REASON)
    conversation = load_conversation(path, "anthropic-messages")
    assert isinstance(conversation, RecordedConversation)
    turns = [m for m in conversation.messages if isinstance(m, AssistantMessage)]
    assert any((m.provider_data.get("anthropic-messages") or {}).get("thinking") for m in turns)
    matrix = handoff_matrix([conversation], ["anthropic-messages", "openai-chat", "bedrock-converse"])
    verdicts = {o.target: (o.verdict, o.rule) for o in matrix.outcomes}
    assert verdicts == {
        "anthropic-messages": ("pass", None),
        "openai-chat": ("pass", None),
        "bedrock-converse": ("impossible", "thinking-first"),
    }
    kept = {
        (d.what, d.action) for o in matrix.outcomes if o.target == "anthropic-messages" for d in o.decisions
    }
    assert ("thinking blocks", "kept") in kept


def test_the_command_prints_the_matrix_and_exits_by_it(cli: Cli, tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    source = next((REPO_ROOT / "cassettes" / "openai-chat").glob("*/calendar_multi_turn_01.yaml"))
    (cassettes / "openai-chat" / source.parent.name).mkdir(parents=True)
    (cassettes / "openai-chat" / source.parent.name / source.name).write_bytes(source.read_bytes())
    ran = cli("handoff", "--cassettes", str(cassettes), "--markdown")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("| source \\ target | openai-chat |")
    assert "| openai-chat | pass | pass | thinking-first |" in ran.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = cli("handoff", "--cassettes", str(empty))
    assert refused.returncode == 2 and "no recorded multi-turn conversation" in refused.stderr
