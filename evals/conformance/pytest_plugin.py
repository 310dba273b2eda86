"""xpeval's pytest plugin (entry point `pytest11: xpeval`): cassette modes, fixtures, and the
registry-derived conformance suite for any project.

    pytest --xpeval-conformance [--cassette-dir DIR]      # every registered adapter, plugins too
    pytest --cassette-mode replay|record|live              # the same three modes as `xpeval run`

- Any test that takes `adapter_id` runs once per registered adapter (wrappers and adapters of
  other packages included), so a new registry entry gets those tests by itself.
- `--xpeval-conformance` adds the suite in `xpeval.evals.conformance` to the collection: the checks
  every adapter must pass, and a replay of the project's cassettes for each adapter.
- `cassette_episode(adapter_id, case_id, model=..., source=...)` binds one cassette to one
  adapter for a test; when the test ends every replay problem (a missing cassette, an unmatched
  request with its diff, an unplayed interaction) fails it, naming the cassette and the command
  that records it. In `record` mode an episode is saved only when its test passed.
- `xpeval_adapter(adapter_id, transport=None, model=None)` builds a registered adapter (closed
  when the test ends).

`replay` (the default; or `XPEVAL_CASSETTE_MODE`) never reaches the network. The cassette
folder defaults to the project's (`[tool.xpeval] cassettes` in pyproject.toml, else
`cassettes/` at the project root).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest

from xpeval.evals.cassettes.binding import BoundCassette, bind_cassette
from xpeval.evals.cassettes.meta import Mode, Source
from xpeval.evals.cassettes.store import CassetteStore

MODE_VARIABLE = "XPEVAL_CASSETTE_MODE"

CassetteBinder = Callable[..., BoundCassette]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xpeval")
    group.addoption(
        "--cassette-mode",
        choices=[mode.value for mode in Mode],
        default=None,
        help=f"replay (default, network blocked), record or live; also ${MODE_VARIABLE}",
    )
    group.addoption(
        "--cassette-dir",
        default=None,
        help="cassette folder (default: the project's, see [tool.xpeval] cassettes)",
    )
    group.addoption(
        "--xpeval-conformance",
        action="store_true",
        default=False,
        help="run xpeval's conformance suite for every registered adapter",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("xpeval_conformance"):
        import xpeval.evals.conformance

        config.args.append(str(Path(xpeval.evals.conformance.__file__).parent))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Registry-derived parametrization: a test taking `adapter_id` runs once per registered adapter."""
    if "adapter_id" in metafunc.fixturenames:
        from xpeval.adapters.registry import ADAPTER_REGISTRY

        metafunc.parametrize("adapter_id", list(ADAPTER_REGISTRY))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[_PASSED] = report.passed


_PASSED = pytest.StashKey[bool]()


@pytest.fixture
def cassette_mode(request: pytest.FixtureRequest) -> Mode:
    chosen = request.config.getoption("--cassette-mode") or os.environ.get(MODE_VARIABLE) or Mode.REPLAY.value
    try:
        return Mode(chosen)
    except ValueError:
        raise pytest.UsageError(f"{MODE_VARIABLE}={chosen!r}: expected replay, record or live") from None


@pytest.fixture
def cassette_store(request: pytest.FixtureRequest) -> CassetteStore:
    chosen = request.config.getoption("--cassette-dir")
    if chosen:
        return CassetteStore(Path(chosen))
    from xpeval.evals.project import project_settings

    return CassetteStore(project_settings(Path(request.config.rootpath)).cassettes)


@pytest.fixture
def xpeval_case_dir(request: pytest.FixtureRequest) -> str | None:
    """The project's case folder ([tool.xpeval] cases), None for the built-in set."""
    from xpeval.evals.project import project_settings

    cases = project_settings(Path(request.config.rootpath)).cases
    return str(cases) if cases else None


@pytest.fixture
def cassette_episode(
    request: pytest.FixtureRequest, cassette_mode: Mode, cassette_store: CassetteStore
) -> Generator[CassetteBinder, None, None]:
    """`cassette_episode(adapter_id, case_id, source=..., model=...)`: a BoundCassette in the mode."""
    opened: list[BoundCassette] = []

    def open_one(
        adapter_id: str,
        case_id: str,
        *,
        model: str,
        source: Source = "live",
        secrets: Sequence[str] = (),
        upstream: httpx2.AsyncBaseTransport | None = None,
    ) -> BoundCassette:
        episode = bind_cassette(
            cassette_store,
            adapter_id,
            case_id,
            cassette_mode,
            source=source,
            model=model,
            secrets=secrets,
            upstream=upstream,
        )
        opened.append(episode)
        return episode

    yield open_one
    passed = request.node.stash.get(_PASSED, False)
    problems = [problem for episode in opened for problem in episode.finish(succeeded=passed)]
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def xpeval_adapter() -> Generator[Callable[..., Any], None, None]:
    """`xpeval_adapter(adapter_id, transport=None, model=None)` -> the registered adapter."""
    from xpeval.adapters.adapter import Adapter, AdapterSettings
    from xpeval.adapters.registry import create_adapter

    built: list[Adapter] = []

    def build(
        adapter_id: str, transport: httpx2.AsyncBaseTransport | None = None, model: str | None = None
    ) -> Adapter:
        adapter = create_adapter(adapter_id, AdapterSettings(transport=transport, model=model))
        built.append(adapter)
        return adapter

    yield build

    async def close() -> None:
        for adapter in built:
            await adapter.aclose()

    asyncio.run(close())
