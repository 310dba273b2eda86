"""Naming adapters as a new team does: a typo gets the closest id and the list, `all` means every
registered adapter, and an id the project's pyproject.toml names but nothing installed offers says
where it was named (issue 36, points 4 and 6)."""

from __future__ import annotations

import json
from pathlib import Path

from tests._cli import Cli
from xpeval.adapters.registry import ADAPTER_REGISTRY

WEATHER = {
    "name": "get_weather",
    "description": "Weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def _project(tmp_path: Path, table: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "team"\n\n[tool.xpeval]\n{table}')
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "weather.json").write_text(json.dumps(WEATHER))
    return tmp_path


def _schemas(cli: Cli, project: Path, *flags: str) -> tuple[int, list[str], str]:
    ran = cli(
        "schemas", "--json", "--workers", "1", "--examples", "2", "--corpus", "tools", *flags, cwd=project
    )
    adapters = [json.loads(line)["adapter"] for line in ran.stdout.splitlines() if line.startswith("{")]
    return ran.returncode, adapters, ran.stderr


def test_a_typo_in_adapters_gets_the_closest_id_and_the_list(cli: Cli, tmp_path: Path) -> None:
    project = _project(tmp_path)
    ran = cli("run", "--adapters", "openai-chta", "--no-progress", cwd=project)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert "Unknown adapter: openai-chta" in ran.stderr and "did you mean openai-chat?" in ran.stderr
    assert all(adapter_id in ran.stderr for adapter_id in ADAPTER_REGISTRY)


def test_adapters_all_is_every_registered_adapter(cli: Cli, tmp_path: Path) -> None:
    code, adapters, err = _schemas(cli, _project(tmp_path), "--adapters", "all")
    assert code == 0, err
    assert adapters == list(ADAPTER_REGISTRY)


def test_an_adapter_the_pyproject_names_but_nothing_installed_offers_says_where_it_was_named(
    cli: Cli, tmp_path: Path
) -> None:
    project = _project(tmp_path, 'adapters = ["openai-chat", "deepseek"]\n')
    code, adapters, err = _schemas(cli, project)
    assert code == 2 and adapters == []
    assert "Unknown adapter: deepseek" in err
    assert f"named by [tool.xpeval] adapters in {project / 'pyproject.toml'}" in err
    assert "no installed package offers it" in err
