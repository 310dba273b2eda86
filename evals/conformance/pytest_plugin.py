"""xpeval's pytest plugin (entry point `pytest11: xpeval`): cassette modes, fixtures, and the
registry-derived conformance suite, as a guest in any project's test run.

    pytest --xpeval-conformance [--xpeval-adapters A,B]   # xpeval's checks for the project's adapters
    pytest --xpeval-cassette-mode replay|record|live      # the same three modes as `xpeval run`

Nothing happens in a host's run unless it asks: every fixture and option is named `xpeval_*` /
`--xpeval-*`, and a test is parametrized over adapters only when it takes `xpeval_adapter_id`
(a host's own `adapter_id` argument is the host's business; xpeval never touches it). The
adapter and wire plugins are loaded (`ensure_loaded()`) only then too: by `--xpeval-conformance`,
a test taking `xpeval_adapter_id`, or an `xpeval_cassette` / `xpeval_adapter` in use.

- `xpeval_adapter_id`: a test taking it runs once per adapter in scope: `--xpeval-adapters A,B`,
  else the project's `[tool.xpeval] adapters`, else every registered adapter (wrappers and
  adapters of other packages included). An unknown id in either stops the run naming it.
- `--xpeval-conformance` adds the suite in `xpeval.evals.conformance` to the collection: the checks
  every adapter in scope must pass (its wire, capabilities and provider data), and a replay of
  the project's cassettes for each. A plugin adapter that was refused fails that run.
- `xpeval_cassette(adapter_id, case_id, model=..., source=...)` binds one cassette to one
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
from typing import TYPE_CHECKING, Any

import pytest

from xpeval.evals.cassettes.meta import Mode, Source

# The cassette machinery (vcrpy) and httpx2 are imported by the fixtures that use them, never
# when pytest loads the plugin: a host's test run that asks nothing of xpeval does not pay for them.
if TYPE_CHECKING:
    import httpx2

    from xpeval.evals.cassettes.binding import BoundCassette
    from xpeval.evals.cassettes.store import CassetteStore
    from xpeval.evals.project import ProjectSettings

MODE_VARIABLE = "XPEVAL_CASSETTE_MODE"
ADAPTER_FIXTURE = "xpeval_adapter_id"
"""The one argument name the plugin parametrizes (namespaced: a host's `adapter_id` is its own)."""

CassetteBinder = Callable[..., "BoundCassette"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xpeval")
    group.addoption(
        "--xpeval-cassette-mode",
        choices=[mode.value for mode in Mode],
        default=None,
        help=f"replay (default, network blocked), record or live; also ${MODE_VARIABLE}",
    )
    group.addoption(
        "--xpeval-cassette-dir",
        default=None,
        help="cassette folder (default: the project's, see [tool.xpeval] cassettes)",
    )
    group.addoption(
        "--xpeval-conformance",
        action="store_true",
        default=False,
        help="run xpeval's conformance suite for the adapters in scope",
    )
    group.addoption(
        "--xpeval-adapters",
        default=None,
        metavar="A,B",
        help="the adapters xpeval_adapter_id runs over (default: [tool.xpeval] adapters, else all)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("xpeval_conformance"):
        import xpeval.evals.conformance

        _refuse_refused_plugins()
        adapters_in_scope(config)  # a bad scope stops the run here, once, not in every module
        config.args.append(str(Path(xpeval.evals.conformance.__file__).parent))


def _refuse_refused_plugins() -> None:
    """A conformance run of a registry that silently lost a plugin (it did not load, was not an
    entry, changed the registry, was offered by two distributions) would pass without ever
    checking it: stop, naming each."""
    from xpeval.adapters.plugins import refused_plugins
    from xpeval.adapters.registry import ensure_loaded

    ensure_loaded()
    refused = refused_plugins()
    if refused:
        named = "; ".join(plugin.line() for plugin in refused)
        raise pytest.UsageError(f"xpeval: refused adapter plugin(s), fix or uninstall them: {named}")


def _project(config: pytest.Config) -> ProjectSettings:
    from xpeval.errors import UserError
    from xpeval.evals.project import project_settings

    cached = config.stash.get(_PROJECT, None)
    if cached is None:
        try:
            cached = project_settings(Path(config.rootpath))
        except UserError as exc:
            raise pytest.UsageError(f"xpeval: {exc}") from None
        config.stash[_PROJECT] = cached
    return cached


def adapters_in_scope(config: pytest.Config) -> list[str]:
    """`--xpeval-adapters`, else the project's `[tool.xpeval] adapters`, else every registered id;
    an id that is not registered stops the run (a typo must not shrink the suite silently)."""
    cached = config.stash.get(_SCOPE, None)
    if cached is not None:
        return cached
    from xpeval.adapters.registry import ADAPTER_REGISTRY, ensure_loaded

    ensure_loaded()  # asked for: a test takes xpeval_adapter_id, or the run is --xpeval-conformance
    option = config.getoption("xpeval_adapters")
    if option is not None:
        wanted = [part.strip() for part in str(option).split(",") if part.strip()]
        where = "--xpeval-adapters"
        if not wanted:
            raise pytest.UsageError("xpeval: --xpeval-adapters names no adapter")
    else:
        project = _project(config)
        wanted = list(project.adapters)
        where = f"{project.pyproject}: [tool.xpeval] adapters"
    unknown = [adapter_id for adapter_id in wanted if adapter_id not in ADAPTER_REGISTRY]
    if unknown:
        raise pytest.UsageError(
            f"xpeval: {where} names unknown adapter(s) {', '.join(unknown)} "
            f"(registered: {', '.join(ADAPTER_REGISTRY)})"
        )
    scope = list(dict.fromkeys(wanted)) or list(ADAPTER_REGISTRY)
    config.stash[_SCOPE] = scope
    return scope


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Registry-derived parametrization, for tests that ask for it by taking `xpeval_adapter_id`."""
    if ADAPTER_FIXTURE in metafunc.fixturenames:
        metafunc.parametrize(ADAPTER_FIXTURE, adapters_in_scope(metafunc.config))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[_PASSED] = report.passed


_PASSED = pytest.StashKey[bool]()
_PROJECT = pytest.StashKey["ProjectSettings"]()
_SCOPE = pytest.StashKey[list[str]]()


@pytest.fixture
def xpeval_cassette_mode(request: pytest.FixtureRequest) -> Mode:
    chosen = (
        request.config.getoption("xpeval_cassette_mode") or os.environ.get(MODE_VARIABLE) or Mode.REPLAY.value
    )
    try:
        return Mode(chosen)
    except ValueError:
        raise pytest.UsageError(f"{MODE_VARIABLE}={chosen!r}: expected replay, record or live") from None


@pytest.fixture
def xpeval_cassette_store(request: pytest.FixtureRequest) -> CassetteStore:
    from xpeval.evals.cassettes.store import CassetteStore

    chosen = request.config.getoption("xpeval_cassette_dir")
    if chosen:
        return CassetteStore(Path(chosen))
    return CassetteStore(_project(request.config).cassettes)


@pytest.fixture
def xpeval_case_dir(request: pytest.FixtureRequest) -> str | None:
    """The project's case folder ([tool.xpeval] cases), None for the built-in set."""
    cases = _project(request.config).cases
    return str(cases) if cases else None


@pytest.fixture
def xpeval_cassette(
    request: pytest.FixtureRequest, xpeval_cassette_mode: Mode, xpeval_cassette_store: CassetteStore
) -> Generator[CassetteBinder, None, None]:
    """`xpeval_cassette(adapter_id, case_id, source=..., model=...)`: a BoundCassette in the mode."""
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
        from xpeval.adapters.registry import ensure_loaded
        from xpeval.evals.cassettes.binding import bind_cassette

        ensure_loaded()  # the adapter's wire may be a plugin's: its requests are matched by it
        bound = bind_cassette(
            xpeval_cassette_store,
            adapter_id,
            case_id,
            xpeval_cassette_mode,
            source=source,
            model=model,
            secrets=secrets,
            upstream=upstream,
        )
        opened.append(bound)
        return bound

    yield open_one
    passed = request.node.stash.get(_PASSED, False)
    problems = [problem for bound in opened for problem in bound.finish(succeeded=passed)]
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
