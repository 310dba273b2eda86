"""Every credential value this process handed to an SDK, so nothing it writes can carry one.

Provider modules register each real key (and credential-like URL query values) here when they
build a client; whatever writes files or logs (cassettes, results rows, reports, the log
filter) replaces every registered value, also when a provider echoes it back.
"""

from __future__ import annotations

import threading

CREDENTIAL_PARAMS = frozenset(
    {
        "key", "apikey", "api_key", "api-key", "token", "access_token", "refresh_token",
        "id_token", "auth", "sig", "signature", "secret", "client_secret", "password", "passwd",
        "pwd", "code", "session", "sessionid", "credential", "credentials", "assertion",
    }
)  # fmt: skip
"""Query parameter names whose values are credentials (compared case-insensitively): API keys
and tokens, signed-URL signatures, OAuth's `code` and `client_secret`, passwords."""

CREDENTIAL_WORDS = ("key", "token", "secret", "password", "signature", "credential")
"""A name ending in one of these words (`subscription-key`, `X-Amz-Security-Token`,
`private_token`, `app_secret`) is a credential too."""

MIN_SECRET_LENGTH = 8
"""Shorter values are not registered: replacing a 3-letter "secret" everywhere would corrupt text."""

_lock = threading.Lock()
_values: set[str] = set()


def is_credential_param(name: str) -> bool:
    """Whether a query parameter of this name carries a credential."""
    lowered = name.lower()
    if lowered in CREDENTIAL_PARAMS:
        return True
    last = lowered.replace("-", "_").replace(".", "_").rsplit("_", 1)[-1]
    return lowered != last and last in CREDENTIAL_WORDS


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
