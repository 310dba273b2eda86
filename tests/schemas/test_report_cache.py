"""The default schema-acceptance report is measured again only when what it measures changed:
the corpus files, the measuring code, the adapters or the settings (`xpeval.evals.acceptance.cache`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import xpeval.evals.acceptance.cache as cache
import xpeval.evals.acceptance.sources.tool_files as tool_files
from tests.schemas._cli import WEATHER_SCHEMA, write
from xpeval.evals.commands import schemas as command


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A small corpus in place of the built-in one (the measurement is the real one), and a copy
    of the measured code list with one file of the test's own."""
    corpus = tmp_path / "corpus"
    write(corpus / "weather.json", {"name": "get_weather", "description": "", "parameters": WEATHER_SCHEMA})
    write(corpus / "MANIFEST.json", {"not": "a tool"})
    code = write(tmp_path / "code" / "measure.py", "RULE = 1\n")
    monkeypatch.setattr(tool_files, "BUILTIN_CORPUS", corpus)
    real_code_files = cache.code_files
    monkeypatch.setattr(cache, "code_files", lambda: [*real_code_files(), code])
    return {"corpus": corpus, "code": code, "reports": tmp_path / "reports"}


def _refuse_to_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    def measured(*args: Any, **kwargs: Any) -> list[Any]:
        raise AssertionError("measured although nothing changed")

    monkeypatch.setattr(cache, "measure_default", measured)


def _count_measurements(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = cache.measure_default

    def measured(*args: Any, **kwargs: Any) -> list[Any]:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(cache, "measure_default", measured)
    return calls


def test_a_second_call_with_nothing_changed_measures_nothing(
    project: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    md, measured = command.ensure_default_report(project["reports"], log=said.append)
    assert measured and md == project["reports"] / "schema_acceptance.md" and md.exists()
    assert (project["reports"] / "schema_acceptance.key").exists()
    before = md.read_text()
    _refuse_to_measure(monkeypatch)
    md, measured = command.ensure_default_report(project["reports"], log=said.append)
    assert not measured and md.read_text() == before
    assert said[-1].startswith(f"schema acceptance: {md} is current (key ")
    assert said[-1].endswith("): not measured again")
    assert command.write_default_report(project["reports"]) == md, "what `xpeval run` calls today"


def test_a_changed_corpus_file_or_measured_code_is_measured_again(
    project: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    command.ensure_default_report(project["reports"], log=said.append)
    calls = _count_measurements(monkeypatch)

    tool = project["corpus"] / "weather.json"
    tool.write_text(tool.read_text().replace('"description": ""', '"description": "the weather"'))
    _, measured = command.ensure_default_report(project["reports"], log=said.append)
    assert measured and calls == [1]
    assert said[-1] == "schema acceptance: measuring (changed since the last report: corpus: weather.json)"

    project["code"].write_text("RULE = 2\n")
    _, measured = command.ensure_default_report(project["reports"], log=said.append)
    assert measured and calls == [1, 1]
    assert "code: " in said[-1] and "measure.py" in said[-1]

    write(project["corpus"] / "new.json", {"name": "new", "parameters": WEATHER_SCHEMA})
    _, measured = command.ensure_default_report(project["reports"], log=said.append)
    assert measured and calls == [1, 1, 1] and said[-1].endswith("corpus: new.json)")
    _, measured = command.ensure_default_report(project["reports"], log=said.append)
    assert not measured and calls == [1, 1, 1]


def test_a_report_overwritten_since_is_measured_again(
    project: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    command.ensure_default_report(project["reports"], log=lambda line: None)
    calls = _count_measurements(monkeypatch)
    # `xpeval schemas --tools ... --reports reports` writes the same file names
    (project["reports"] / "schema_acceptance.md").write_text("# another measurement\n")
    _, measured = command.ensure_default_report(project["reports"], log=lambda line: None)
    assert measured and calls == [1]
    (project["reports"] / "schema_acceptance.csv").unlink()
    _, measured = command.ensure_default_report(project["reports"], log=lambda line: None)
    assert measured and calls == [1, 1]


def test_the_key_holds_the_corpus_the_code_the_adapters_and_the_settings(project: dict[str, Path]) -> None:
    command.ensure_default_report(project["reports"], log=lambda line: None)
    stored = json.loads((project["reports"] / "schema_acceptance.key").read_text())
    parts = stored["parts"]
    assert list(parts["corpus"]) == ["weather.json"], "MANIFEST/README are not tools"
    assert "adapters/schema/_unions.py" in parts["code"] and "evals/acceptance/fidelity.py" in parts["code"]
    assert any(name.startswith("evals/acceptance/") for name in parts["code"])
    assert ["vertex-ai", "google-genai", "gemini-openapi"] in parts["adapters"]
    assert parts["settings"] == {"examples": 20, "seconds": 0.3, "fidelity": True}
    assert stored["key"] == cache.key_of(parts)
    other = {**parts, "settings": {**parts["settings"], "examples": 21}}
    assert cache.key_of(other) != stored["key"]
