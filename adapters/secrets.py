"""Every credential value this process handed to an SDK, so nothing it writes can carry one.

Provider modules register each real key (and credential-like URL query values) here when they
build a client; whatever writes files or logs (cassettes, results rows, reports, the log
filter) replaces every registered value, also when a provider echoes it back.

A text cut before it is written (the first characters of a body a decode error shows) must be
scrubbed before the cut: once cut, what is left of a secret is no longer a secret any scrubber
can recognise. `redacted` is that step for the adapters; the scrubber it applies is the one
scrubber (`xpeval.evals.scrub` sets it with `use_redactor` when it is imported: `adapters/`
imports nothing from `evals/`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

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

PLACEHOLDER = "<scrubbed>"
"""What a secret is replaced with, here and by the scrubber."""

_lock = threading.Lock()
_values: set[str] = set()
_redactor: Callable[[str], str] | None = None


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


def use_redactor(redact: Callable[[str], str]) -> None:
    """The function `redacted` applies (the one scrubber's, set by `xpeval.evals.scrub`)."""
    global _redactor
    _redactor = redact


def redacted(text: str) -> str:
    """`text` with every secret replaced, before anything cuts it. Until the scrubber is set
    (adapters used without `xpeval.evals`, which is what writes files), the registered values."""
    if _redactor is not None:
        return _redactor(text)
    for value in sorted(known(), key=len, reverse=True):
        text = text.replace(value, PLACEHOLDER)
    return text
