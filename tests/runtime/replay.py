"""Replay a cassette's responses, in order, to whatever the adapter sends; keep what it sent.

A thin wrapper over `xpeval.evals.cassettes.ordered_replay.InOrderReplay` (which already serves recorded
bytes in order and refuses requests beyond the recording) that also keeps each outgoing
request body, so a test can compare the conversation it built with the recorded one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

from xpeval.evals.cassettes.format import Interaction, load_cassette
from xpeval.evals.cassettes.ordered_replay import InOrderReplay


class RecordingReplay:
    def __init__(self, path: Path) -> None:
        self.interactions: list[Interaction] = load_cassette(path)
        self._replay = InOrderReplay(self.interactions, source=path.name)
        self.sent: list[Any] = []

    @property
    def remaining(self) -> int:
        return self._replay.remaining

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        self.sent.append(json.loads(request.content) if request.content else None)
        return self._replay(request)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self._handle)
