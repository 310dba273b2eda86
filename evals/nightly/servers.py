"""The local model servers as the nightly sees them: which run, which can be started, and
stopping only what it started."""

from __future__ import annotations

from typing import Protocol

from xpeval.errors import UserError


class LocalServers(Protocol):
    """The local model servers as the nightly sees them (tests pass a fake)."""

    def running(self, alias: str) -> bool: ...

    def missing(self, alias: str) -> str | None:
        """Why the server of `alias` cannot be started here (None: the extra is installed)."""
        ...

    def start(self, alias: str) -> None: ...

    def stop(self, alias: str) -> None: ...


class InstalledServers:
    """The real servers (`xpeval.evals.local_model.LocalModelServer`); only ever stops what it started."""

    def running(self, alias: str) -> bool:
        from xpeval.evals.local_model import LocalModelServer

        try:
            return LocalModelServer(alias).status().state == "running"
        except UserError:
            return False

    def missing(self, alias: str) -> str | None:
        from xpeval.evals.local_model import find_artifacts

        try:
            find_artifacts(alias)
        except UserError as exc:
            return str(exc)
        return None

    def start(self, alias: str) -> None:
        from xpeval.evals.local_model import LocalModelServer

        LocalModelServer(alias).serve()

    def stop(self, alias: str) -> None:
        from xpeval.evals.local_model import LocalModelServer

        LocalModelServer(alias).stop()
