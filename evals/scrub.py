"""What never reaches a file or a log: credentials, account identifiers and configured secrets.

Applied to every interaction before it is kept in a cassette (vcrpy's `before_record_request`
and `before_record_response` hooks) and to every incoming request before it is matched, so a
request still matches its scrubbed recording; to every result row before it is written
(`scrub_row`); and, through a log filter, to every log line of the libraries that see raw
requests. What is replaced:
- the request headers that carry a registered provider's credentials (each provider states
  them as data: `Provider.secret_headers`), plus `cookie` and `proxy-authorization`;
- the response headers that identify an account (`Provider.secret_response_headers`), plus
  `set-cookie`;
- every credential-like query parameter (`xpeval.adapters.secrets.CREDENTIAL_PARAMS`: key, token,
  sig, ... in any case);
- every secret value, anywhere: each key xpeval handed to an SDK (`xpeval.adapters.secrets`), each
  credential-looking environment variable and each configured secret, in URLs, any header,
  request and response bodies (compressed bodies are decompressed first, so nothing hides
  inside gzip), as written, as JSON-escaped and as URL-encoded text — also when a provider
  echoes one back.
"""

from __future__ import annotations

import json
import logging
import os
import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

from vcr.filters import decode_response
from vcr.request import Request as VcrRequest

from xpeval.adapters import secrets
from xpeval.adapters.secrets import CREDENTIAL_PARAMS, MIN_SECRET_LENGTH

PLACEHOLDER = "<scrubbed>"
GENERIC_REQUEST_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
GENERIC_RESPONSE_HEADERS = frozenset({"set-cookie"})

SECRET_ENV_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
"""Environment variables treated as secrets by `environment_secrets` (e.g. OPENAI_API_KEY)."""

_CREDENTIAL_PARAM = re.compile(
    r"(?i)(?<=[?&])(" + "|".join(re.escape(name) for name in sorted(CREDENTIAL_PARAMS)) + r")=[^&#\s'\"]*"
)


def _provider_headers() -> tuple[frozenset[str], frozenset[str]]:
    """(request, response) header names that carry credentials or account ids, from the
    registered providers' own data."""
    from xpeval.adapters.registry import providers

    known = providers()
    request = GENERIC_REQUEST_HEADERS | {h.lower() for p in known for h in p.secret_headers}
    response = GENERIC_RESPONSE_HEADERS | {h.lower() for p in known for h in p.secret_response_headers}
    return frozenset(request), frozenset(response)


def scrub_query(text: str) -> str:
    """Every credential-like query parameter's value replaced (in a URL or a log line)."""
    return _CREDENTIAL_PARAM.sub(lambda m: f"{m.group(1)}={PLACEHOLDER}", text)


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of credential-looking environment variables, and credential-like query values in
    URL-valued ones (a base URL `...?token=...`), long enough to scrub safely."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if k.upper().endswith(SECRET_ENV_SUFFIXES)}
    for value in env.values():
        if "?" in value and "://" in value:
            query = urlsplit(value).query
            found.update(v for k, v in parse_qsl(query) if secrets.is_credential_param(k))
    return sorted(v for v in found if len(v) >= MIN_SECRET_LENGTH)


def known_secrets() -> list[str]:
    """Every secret this process knows of: keys handed to SDKs and credential-looking
    environment variables."""
    return sorted({*secrets.known(), *environment_secrets()})


def _variants(secret: str) -> list[str]:
    escaped = json.dumps(secret)[1:-1]
    ascii_escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    forms = {secret, escaped, ascii_escaped, quote(secret, safe=""), quote_plus(secret)}
    return sorted(forms, key=len, reverse=True)


class Scrubber:
    """Removes credentials and the configured secrets from requests, responses and text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        short = [s for s in values if len(s) < MIN_SECRET_LENGTH]
        if short:
            raise ValueError(
                f"{len(short)} configured secret(s) shorter than {MIN_SECRET_LENGTH} characters: "
                "too short to scrub without corrupting recordings"
            )
        self._text = [variant for value in values for variant in _variants(value)]
        self._bytes = [(v.encode("utf-8"), PLACEHOLDER.encode()) for v in self._text]
        _LIVE.add(self)

    @property
    def has_secrets(self) -> bool:
        return bool(self._text)

    def text(self, value: str) -> str:
        for variant in self._text:
            if variant in value:
                value = value.replace(variant, PLACEHOLDER)
        return value

    def data(self, value: bytes) -> bytes:
        for variant, placeholder in self._bytes:
            if variant in value:
                value = value.replace(variant, placeholder)
        return value

    def uri(self, uri: str) -> str:
        return self.text(scrub_query(uri))

    def body(self, body: Any) -> Any:
        if isinstance(body, (bytes, bytearray)):
            return self.data(bytes(body))
        if isinstance(body, str):
            return self.text(body)
        return body

    def request(self, request: VcrRequest) -> VcrRequest:
        """A scrubbed copy of a vcrpy request (vcrpy's `before_record_request`)."""
        secret_headers, _ = _provider_headers()
        headers = {
            name: PLACEHOLDER if name.lower() in secret_headers else self.text(str(value))
            for name, value in request.headers.items()
        }
        return VcrRequest(request.method, self.uri(request.uri), self.body(request.body), headers)

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """A scrubbed, decompressed copy of a vcrpy response dict (vcrpy's `before_record_response`)."""
        response = decode_response(response)  # deep-copies; gzip/deflate/br bodies become plain
        _, secret_headers = _provider_headers()
        headers: dict[str, list[str]] = {}
        for name, values in (response.get("headers") or {}).items():
            listed = values if isinstance(values, list) else [values]
            if name.lower() in secret_headers:
                headers[name] = [PLACEHOLDER for _ in listed]
            else:
                headers[name] = [self.text(str(v)) for v in listed]
        body = response.get("body") or {}
        if isinstance(body, dict) and "string" in body:
            before = body["string"]
            body["string"] = self.body(before)
            if body["string"] != before:
                for name in headers:
                    if name.lower() == "content-length":
                        headers[name] = [str(len(body["string"]))]
        response["headers"] = headers
        return response


_LIVE: weakref.WeakSet[Scrubber] = weakref.WeakSet()


def _header_in_log(names: frozenset[str]) -> re.Pattern[str]:
    """A secret header's value as logged in a repr: `(b'set-cookie', b'...')` or `'api-key': '...'`."""
    listed = "|".join(re.escape(name) for name in sorted(names))
    return re.compile(r"""(?i)(['"](?:""" + listed + r""")['"]\s*[,:]\s*b?['"])([^'"]*)(?=['"])""")


class SecretLogFilter(logging.Filter):
    """Redacts `key=` parameters, scrubbed headers' values and every live Scrubber's secrets.

    vcrpy logs the raw request URL before it is scrubbed (a Gemini `key=` parameter with it),
    httpx2 logs every request URL at INFO, httpcore2's DEBUG trace prints response headers
    (set-cookie, organization ids) and the SDKs' DEBUG logs print request bodies and response
    headers; this filter sits on those loggers. It costs nothing while they are not enabled for
    the record's level.
    """

    def __init__(self) -> None:
        super().__init__()
        request, response = _provider_headers()
        self._headers = _header_in_log(request | response)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = scrub_query(message)
        cleaned = self._headers.sub(lambda m: m.group(1) + PLACEHOLDER, cleaned)
        for scrubber in [*list(_LIVE), current_scrubber()]:
            cleaned = scrubber.text(cleaned)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


TRANSPORT_LOGGERS = (
    "vcr.stubs.httpx_stubs",
    "vcr.cassette",
    "vcr.request",
    "httpx2",
    "httpcore2.connection",
    "httpcore2.http11",
    "httpcore2.http2",
    "httpcore2.proxy",
    "httpcore2.socks",
)
"""The loggers of the HTTP stack and vcrpy that see raw requests; each provider adds its SDK's
(`Provider.sdk_loggers`). A filter is not inherited by child loggers, so each is listed."""


def redacted_loggers() -> list[str]:
    from xpeval.adapters.registry import providers

    return list(dict.fromkeys([*TRANSPORT_LOGGERS, *(name for p in providers() for name in p.sdk_loggers)]))


_installed = False


def install_log_filter() -> None:
    """Attach one SecretLogFilter to each logger that can see raw requests (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name in redacted_loggers():
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretLogFilter) for f in logger.filters):
            logger.addFilter(SecretLogFilter())


_current: tuple[frozenset[str], Scrubber] | None = None


def current_scrubber() -> Scrubber:
    """A scrubber of every secret known right now (rebuilt when a new one is registered)."""
    global _current
    values = frozenset(known_secrets())
    if _current is None or _current[0] != values:
        _current = (values, Scrubber(values))
    return _current[1]


def scrub_value(value: Any, scrubber: Scrubber | None = None) -> Any:
    """`value` with every secret replaced in every string it holds (dict keys included)."""
    scrubber = scrubber or current_scrubber()
    if not scrubber.has_secrets:
        return value
    return _scrubbed(value, scrubber)


def _scrubbed(value: Any, scrubber: Scrubber) -> Any:
    if isinstance(value, str):
        return scrubber.text(value)
    if isinstance(value, dict):
        return {_scrubbed(k, scrubber): _scrubbed(v, scrubber) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item, scrubber) for item in value]
    return value
