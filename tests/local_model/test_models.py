"""The table of served models: one place for each fact, pinned files, parts found in order."""

from __future__ import annotations

import dataclasses
import re
import struct
from pathlib import Path

import pytest

from xpeval.adapters.adapter import AdapterSettings
from xpeval.evals.local_model import (
    DEFAULT_MODEL,
    MODEL_ALIAS,
    MODELS,
    PORT,
    ExtraNotInstalledError,
    LocalModelError,
    ModelIntegrityError,
    ServedModel,
    artifacts,
    get_model,
)
from xpeval.evals.local_model.command import server_command
from xpeval.evals.local_model.gguf import read_metadata
from xpeval.evals.local_model.local_adapters import create_local_adapter
from xpeval.evals.local_model.models import (
    QWEN_CODER_0_5B,
    QWEN_CODER_1_5B,
    QWEN_CODER_1_5B_GGUF_TEMPLATE,
    SERVED,
    check_unique,
    select,
)
from xpeval.evals.local_model.server import chat_template_path, served_template

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "evals" / "local_model"


def test_the_default_model_is_the_1_5b_on_the_port_of_the_existing_recordings() -> None:
    assert DEFAULT_MODEL is MODELS[0] is QWEN_CODER_1_5B
    assert (DEFAULT_MODEL.alias, DEFAULT_MODEL.port) == ("qwen2.5-coder-1.5b-instruct", 18181)
    assert (DEFAULT_MODEL.alias, DEFAULT_MODEL.port) == (MODEL_ALIAS, PORT)


def test_the_0_5b_has_its_own_port() -> None:
    assert get_model("qwen2.5-coder-0.5b-instruct") is QWEN_CODER_0_5B
    assert QWEN_CODER_0_5B.port == 18182


def test_every_model_pins_a_size_and_a_sha256() -> None:
    for model in MODELS:
        assert re.fullmatch(r"[0-9a-f]{64}", model.sha256), model.alias
        assert model.size > 0 and model.part_count > 0
        assert model.gguf_name.endswith(".gguf")
    assert (QWEN_CODER_1_5B.size, QWEN_CODER_1_5B.part_count) == (1_117_320_768, 22)
    assert (QWEN_CODER_0_5B.size, QWEN_CODER_0_5B.part_count) == (491_400_064, 6)
    assert QWEN_CODER_0_5B.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def test_no_two_models_share_an_alias_a_port_a_file_or_a_part_package() -> None:
    check_unique(MODELS)
    clash = dataclasses.replace(QWEN_CODER_0_5B, alias="other", port=QWEN_CODER_1_5B.port)

    with pytest.raises(LocalModelError, match="share a port: 18181"):
        check_unique([QWEN_CODER_1_5B, clash])


def test_the_model_facts_are_written_only_in_the_table() -> None:
    # One fact in one place: no other module of the package (or of evals/) names a model.
    table = PACKAGE / "models.py"
    facts = [
        fact
        for model in MODELS
        for fact in (model.alias, model.gguf_name, model.sha256, model.part_package.split("{")[0])
    ]
    sources = [p for p in (REPO / "evals").rglob("*") if p.suffix in (".py", ".jinja") and p != table]
    for source in sources:
        text = source.read_text(encoding="utf-8")
        assert not [fact for fact in facts if fact in text], source


def test_unknown_aliases_are_refused_with_the_known_ones() -> None:
    with pytest.raises(
        LocalModelError, match=re.escape("qwen2.5-coder-1.5b-instruct, qwen2.5-coder-0.5b-instruct")
    ):
        get_model("gpt-4o")


def test_a_command_acts_on_the_default_model_one_model_or_all() -> None:
    assert select(None) == [DEFAULT_MODEL]
    assert select(QWEN_CODER_0_5B.alias) == [QWEN_CODER_0_5B]
    assert select("all") == list(SERVED)


def test_each_model_finds_its_own_parts_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for model in MODELS:
        for n, package in enumerate(model.part_packages(), start=1):
            data = tmp_path / package / "data"
            data.mkdir(parents=True)
            (data / f"part{n:02d}.bin").write_bytes(b"x")
    monkeypatch.setattr(artifacts, "package_dir", lambda name: tmp_path / name)

    for model in MODELS:
        parts = artifacts.find_model_parts(model)
        assert [p.parent.parent.name for p in parts] == model.part_packages()
        assert [p.name for p in parts] == [f"part{n:02d}.bin" for n in range(1, model.part_count + 1)]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.alias)
def test_the_installed_parts_add_up_to_the_pinned_file(model: ServedModel) -> None:
    try:
        parts = artifacts.find_model_parts(model)
    except ExtraNotInstalledError as exc:
        pytest.skip(f"needs the local-model extra: {exc}")

    assert sum(part.stat().st_size for part in parts) == model.size
    # The GGUF header is at the start of part 1: it names the model the table says it is.
    header = read_metadata(parts[0], ["general.name", "general.file_type"])
    assert header == {"general.name": model.general_name, "general.file_type": model.file_type}


def _gguf(pairs: list[tuple[str, int, bytes]]) -> bytes:
    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text.encode())) + text.encode()

    body = b"".join(string(key) + struct.pack("<I", kind) + value for key, kind, value in pairs)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + body


def test_the_gguf_header_reader_reads_scalars_and_strings_and_skips_arrays(tmp_path: Path) -> None:
    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    path = tmp_path / "m.gguf"
    path.write_bytes(
        _gguf(
            [
                ("general.name", 8, string("Tiny")),
                ("tokenizer.tokens", 9, struct.pack("<IQ", 8, 2) + string("a") + string("bc")),
                ("tokenizer.ids", 9, struct.pack("<IQ", 4, 3) + struct.pack("<3I", 1, 2, 3)),
                ("general.file_type", 4, struct.pack("<I", 15)),
                ("flag", 7, b"\x01"),
            ]
        )
    )

    assert read_metadata(path) == {"general.name": "Tiny", "general.file_type": 15, "flag": True}
    assert read_metadata(path, ["general.name"]) == {"general.name": "Tiny"}


def test_the_gguf_header_reader_refuses_other_files(tmp_path: Path) -> None:
    other = tmp_path / "other.bin"
    other.write_bytes(b"PK\x03\x04" + bytes(20))
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(_gguf([("general.name", 8, struct.pack("<Q", 100) + b"short")]))

    with pytest.raises(ModelIntegrityError, match="not a GGUF file"):
        read_metadata(other)
    with pytest.raises(ModelIntegrityError, match="ends early"):
        read_metadata(truncated)


def test_the_second_vendor_serves_the_1_5b_file_on_its_own_port_without_the_project_template() -> None:
    variant = QWEN_CODER_1_5B_GGUF_TEMPLATE
    assert get_model(variant.alias) is variant and variant in SERVED and variant not in MODELS
    same_file = ("gguf_name", "size", "sha256", "part_package", "part_count", "general_name", "file_type")
    assert all(getattr(variant, f) == getattr(QWEN_CODER_1_5B, f) for f in same_file)
    assert (variant.port, variant.chat_template, served_template(variant)) == (18183, None, None)
    assert served_template(QWEN_CODER_1_5B) == chat_template_path()

    binary, gguf = Path("/bin/llama-server"), Path("/cache/model.gguf")
    ours = server_command(binary, gguf, served_template(QWEN_CODER_1_5B), model=QWEN_CODER_1_5B)
    theirs = server_command(binary, gguf, served_template(variant), model=variant)
    assert ours[ours.index("--chat-template-file") + 1] == str(chat_template_path())
    assert "--jinja" in theirs and "--chat-template-file" not in theirs
    assert (
        theirs[theirs.index("--port") + 1] == "18183" and theirs[theirs.index("--alias") + 1] == variant.alias
    )

    adapter = create_local_adapter("openai-compatible", AdapterSettings(model=variant.alias))
    assert str(adapter.client.base_url).rstrip("/") == "http://127.0.0.1:18183/v1"


def test_entries_share_a_file_name_only_when_they_are_the_same_file() -> None:
    check_unique(SERVED)
    other_file = dataclasses.replace(QWEN_CODER_1_5B_GGUF_TEMPLATE, sha256="0" * 64)

    with pytest.raises(
        LocalModelError, match=re.escape("share a GGUF file name: qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    ):
        check_unique([QWEN_CODER_1_5B, other_file])


def test_the_thread_count_is_one_per_core_unless_the_environment_names_a_positive_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from xpeval.evals.local_model import config

    monkeypatch.delenv(config.THREADS_ENV, raising=False)
    assert config.server_threads() is None
    monkeypatch.setenv(config.THREADS_ENV, "1")
    assert config.server_threads() == 1
    for bad in ("0", "-2", "two"):
        monkeypatch.setenv(config.THREADS_ENV, bad)
        with pytest.raises(LocalModelError, match=config.THREADS_ENV):
            config.server_threads()
