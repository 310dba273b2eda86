"""Every credential value this process handed to an SDK, so nothing it writes can carry one.

Provider modules register each real key (and credential-like URL query values) here when they
build a client; whatever writes files or logs (cassettes, results rows, reports, the log
filter) replaces every registered value, also when a provider echoes it back.
"""

from __future__ import annotations

import threading

CREDENTIAL_PARAMS = frozenset(
    {"key", "api_key", "api-key", "apikey", "token", "access_token", "sig", "signature", "secret", "password"}
)
"""Query parameter names whose values are credentials (compared case-insensitively)."""

MIN_SECRET_LENGTH = 8
"""Shorter values are not registered: replacing a 3-letter "secret" everywhere would corrupt text."""

_lock = threading.Lock()
_values: set[str] = set()


def is_credential_param(name: str) -> bool:
    return name.lower() in CREDENTIAL_PARAMS


def register(value: str) -> None:
    """Remember a credential value (ignored when too short to scrub safely)."""
    if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _values.add(value)


def known() -> frozenset[str]:
    with _lock:
        return frozenset(_values)


def forget_all() -> None:
    """Tests only: start from no registered secret."""
    with _lock:
        _values.clear()
