"""Several models served side by side (fake llama-server): per-model records, ports and CLI."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_model.conftest import free_port
from xpeval.evals.cli import main
from xpeval.evals.local_model import (
    MODELS,
    Artifacts,
    LocalModelError,
    LocalModelPaths,
    LocalModelServer,
    ServedModel,
    models,
)
from xpeval.evals.local_model.pidfile import is_alive, read_record, write_record

ONE, TWO = MODELS[0], MODELS[1]


@pytest.fixture
def servers(paths: LocalModelPaths, fake_artifacts: Artifacts) -> Iterator[dict[str, LocalModelServer]]:
    made = {
        model.alias: LocalModelServer(model, paths=paths, port=free_port(), artifacts=fake_artifacts)
        for model in MODELS
    }
    yield made
    for server in made.values():
        if server.status().state in ("running", "starting"):
            server.stop()


def test_a_server_defaults_to_its_models_own_port() -> None:
    assert [LocalModelServer(model).port for model in MODELS] == [model.port for model in MODELS]
    assert LocalModelServer().model == ONE and LocalModelServer(TWO.alias).model == TWO


def test_two_models_run_side_by_side_with_their_own_records_and_logs(
    servers: dict[str, LocalModelServer],
) -> None:
    one, two = servers[ONE.alias], servers[TWO.alias]
    first, second = one.serve(timeout=30), two.serve(timeout=30)

    assert first.state == second.state == "running" and first.pid != second.pid
    assert (first.model, second.model) == (ONE.alias, TWO.alias)
    assert one.pid_file != two.pid_file and one.log_file != two.log_file
    for server, status in ((one, first), (two, second)):
        record = read_record(server.pid_file)
        assert record is not None
        assert (record.pid, record.port, record.alias) == (status.pid, server.port, server.model.alias)
        assert record.model.endswith(server.model.gguf_name)
        assert server.log_file.name == f"{server.model.alias}.log" and server.log_file.exists()


def test_stopping_one_model_leaves_the_other_running(servers: dict[str, LocalModelServer]) -> None:
    one, two = servers[ONE.alias], servers[TWO.alias]
    one_pid = one.serve(timeout=30).pid
    two_pid = two.serve(timeout=30).pid
    assert one_pid is not None and two_pid is not None

    assert two.stop().state == "stopped"

    assert not is_alive(two_pid) and is_alive(one_pid)
    assert (one.status().state, two.status().state) == ("running", "stopped")


def test_a_record_of_another_model_is_never_acted_on(servers: dict[str, LocalModelServer]) -> None:
    one, two = servers[ONE.alias], servers[TWO.alias]
    two_pid = two.serve(timeout=30).pid
    record = read_record(two.pid_file)
    assert record is not None and two_pid is not None
    # The other model's record, though its process is a live server of ours, in this model's file.
    write_record(one.pid_file, record)

    assert one.status().state == "stopped"
    with pytest.raises(LocalModelError, match="not stopping it"):
        one.stop()

    assert is_alive(two_pid) and two.status().state == "running"


@pytest.fixture
def cli_models(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_artifacts: Artifacts
) -> Iterator[list[ServedModel]]:
    """The model table with free ports, served by the fake binary, state under tmp_path."""
    table = tuple(dataclasses.replace(model, port=free_port()) for model in MODELS)
    monkeypatch.setattr(models, "MODELS", table)
    monkeypatch.setattr(models, "SERVED", table)
    monkeypatch.setattr(models, "DEFAULT_MODEL", table[0])
    monkeypatch.setattr("xpeval.evals.local_model.server.find_artifacts", lambda model=None: fake_artifacts)
    monkeypatch.setenv("XPEVAL_LOCAL_MODEL_DIR", str(tmp_path / "home"))
    yield list(table)
    for model in table:
        server = LocalModelServer(model)
        if server.status().state in ("running", "starting"):
            server.stop()


def test_the_cli_serves_stops_and_reports_one_model_or_all(
    cli_models: list[ServedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = cli_models

    assert main(["local-model", "serve"]) == 0  # the default model only
    assert f"local model {one.alias} running" in capsys.readouterr().out
    assert main(["local-model", "status", "--model", "all"]) == 3
    assert capsys.readouterr().out.splitlines()[1].startswith(f"local model {two.alias} stopped")

    assert main(["local-model", "serve", "--model", "all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("already running") and lines[1].startswith(f"local model {two.alias} running")
    assert main(["local-model", "status", "--model", "all", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["model"], row["state"], row["port"]) for row in rows] == [
        (one.alias, "running", one.port),
        (two.alias, "running", two.port),
    ]

    assert main(["local-model", "stop", "--model", two.alias]) == 0
    assert main(["local-model", "status"]) == 0  # the default model still runs
    assert main(["local-model", "stop", "--model", "all"]) == 0
    out = capsys.readouterr().out
    assert f"local model {one.alias} stopped" in out and "was not running" in out
    assert main(["local-model", "status", "--model", "all"]) == 3


def test_the_cli_stops_every_model_it_can_and_reports_the_refusal(
    cli_models: list[ServedModel], capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    one, two = cli_models
    assert main(["local-model", "serve", "--model", two.alias]) == 0
    with socket.socket() as listener:  # something xpeval did not start holds the default port
        listener.bind(("127.0.0.1", one.port))
        listener.listen()

        assert main(["local-model", "stop", "--model", "all"]) == 2

    captured = capsys.readouterr()
    assert f"local model {two.alias} stopped" in captured.out
    assert f"port {one.port} is held by a process xpeval did not start" in captured.err


def test_the_cli_refuses_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["local-model", "serve", "--model", "gpt-4o"])

    assert "invalid choice: 'gpt-4o'" in capsys.readouterr().err
