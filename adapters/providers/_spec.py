"""A provider stated as data: its key variables, base URL, default model and secret headers.

Everything a caller needs to know about a provider without building its SDK client (whether
its credentials are set, which model it defaults to, which headers carry its credentials) is
read from here; the provider modules' factories read the same data to build the client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from xpeval.adapters import secrets

PLACEHOLDER_API_KEY = "test-key-not-a-secret"
"""Key used when none is configured: enough for the SDKs to build a request that a cassette or
the emulator answers; a real provider would refuse it."""

BEARER_HEADERS = ("authorization",)
"""What the Stainless SDKs (openai, anthropic proxies) send the key in."""


@dataclass(frozen=True)
class Provider:
    """How one provider is reached and what of it is secret."""

    name: str
    default_model: str
    key_vars: tuple[str, ...] = ()
    """Environment variables holding the API key, in the order they are tried."""
    base_url_var: str | None = None
    default_base_url: str | None = None
    secret_headers: tuple[str, ...] = BEARER_HEADERS
    """Request headers that carry its credentials (scrubbed from every recording and log)."""
    secret_response_headers: tuple[str, ...] = ()
    """Response headers that identify the account (scrubbed likewise)."""
    sdk_loggers: tuple[str, ...] = ()
    """Loggers of its SDK that print raw requests or responses at DEBUG (a log filter sits on each)."""
    ready_when: tuple[tuple[str, ...], ...] | None = None
    """Groups of environment variables, any group fully set meaning "configured for the real
    provider". Default: any one of `key_vars`."""
    extra_env: Mapping[str, str] = field(default_factory=dict)
    """Other settings read from the environment, by role (e.g. {"api_version": "OPENAI_API_VERSION"})."""
    price_provider: str | None = None
    """Its id in `genai-prices` (None: its prices are unknown, so costs stay blank)."""

    def api_key(self, explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
        """The key handed to the SDK: the explicit one, else the first key variable that is set,
        else the placeholder. A real key is registered as a secret before it leaves here."""
        env = os.environ if environ is None else environ
        key = explicit or next((env[name] for name in self.key_vars if env.get(name)), None)
        if not key:
            return PLACEHOLDER_API_KEY
        secrets.register(key)
        return key

    def base_url(self, explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
        env = os.environ if environ is None else environ
        if explicit:
            return explicit
        if self.base_url_var and env.get(self.base_url_var):
            return env[self.base_url_var]
        return self.default_base_url

    def env(self, role: str, environ: Mapping[str, str] | None = None) -> str | None:
        name = self.extra_env.get(role)
        value = (os.environ if environ is None else environ).get(name) if name else None
        return value or None

    def live_ready(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether it is configured to reach the real provider (not only cassettes or the emulator)."""
        if api_key:
            return True
        env = os.environ if environ is None else environ
        groups = self.ready_when if self.ready_when is not None else tuple((name,) for name in self.key_vars)
        if base_url and any(group == (self.base_url_var,) for group in groups):
            return True
        return any(group and all(env.get(name) for name in group) for group in groups)


def split_query(url: str | None) -> tuple[str | None, dict[str, str]]:
    """A base URL without its query, and the query's parameters.

    The SDKs append their paths to the base URL as text, so a query left in it ends up in the
    middle of every path; the parameters go on the HTTP client instead, sent with every request.
    A value that looks like a credential is registered as a secret.
    """
    if not url:
        return url, {}
    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    for name, value in params.items():
        if secrets.is_credential_param(name) and value:
            secrets.register(value)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment)), params
