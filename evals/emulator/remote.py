"""An emulator running in another process, on loopback, as a run's emulator target
(`xpeval run --emulator-url URL`): the run registers its episodes' scripts with it over HTTP
and sends its requests there. A test keeps the emulator (and its counts) alive while it kills
and resumes the run that uses it."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx2

from xpeval.errors import UserError
from xpeval.evals.emulator.script import Reply
from xpeval.evals.emulator.server import SCRIPTS_PATH, EmulatorTransport


class RemoteEmulator:
    """The part of `EmulatorServer` a run uses, for a server at `url` (loopback only)."""

    strict = False

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if parts.scheme != "http" or not loopback or parts.port is None:
            raise UserError(
                f"--emulator-url {url}: an emulator is reached at http://127.0.0.1:PORT (loopback only)"
            )
        self.host = host
        self.port = parts.port
        self._names = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def script(self, replies: Sequence[Reply], name: str | None = None) -> str:
        self._names += 1
        script_id = name or f"remote-script-{self._names}"
        results = [reply.result.model_dump(mode="json") for reply in replies if reply.result is not None]
        try:
            answer = httpx2.post(
                self.url + SCRIPTS_PATH, content=json.dumps({"name": script_id, "results": results})
            )
        except httpx2.HTTPError as exc:
            raise UserError(f"--emulator-url {self.url}: no emulator answers there ({exc})") from exc
        if answer.status_code != 200:
            raise UserError(
                f"--emulator-url {self.url}: the emulator refused a script ({answer.status_code})"
            )
        return script_id

    def transport(
        self, script_id: str, *, pool: httpx2.AsyncBaseTransport | None = None
    ) -> EmulatorTransport:
        return EmulatorTransport(self, script_id, pool=pool)
