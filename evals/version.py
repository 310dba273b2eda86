"""The installed xpeval's version: `xpeval --version` and every cassette's metadata."""

from __future__ import annotations

import importlib.metadata
from functools import cache


@cache
def xpeval_version() -> str:
    try:
        return importlib.metadata.version("xpeval")
    except importlib.metadata.PackageNotFoundError:  # running from a bare checkout
        return "0+unknown"
