"""What never reaches a cassette: credentials, account identifiers and configured secrets.

Applied to every interaction before it is kept (vcrpy's `before_record_request` and
`before_record_response` hooks), and to every incoming request before it is matched, so a
request still matches its scrubbed recording:
- request headers `authorization`, `x-api-key`, `api-key`, `x-goog-api-key`, `cookie`;
- the `key` query parameter (Gemini's API key);
- response headers `set-cookie`, `openai-organization`, `openai-project`,
  `anthropic-organization-id`;
- every configured secret value, anywhere: URL, any header, request and response bodies
  (compressed bodies are decompressed first, so nothing hides inside gzip), as written, as
  JSON-escaped and as URL-encoded text.
"""

from __future__ import annotations

import json
import logging
import os
import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from vcr.filters import decode_response
from vcr.request import Request as VcrRequest

PLACEHOLDER = "<scrubbed>"
SCRUBBED_REQUEST_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"})
SCRUBBED_RESPONSE_HEADERS = frozenset(
    {"set-cookie", "openai-organization", "openai-project", "anthropic-organization-id"}
)
SCRUBBED_QUERY_PARAMS = ("key",)
MIN_SECRET_LENGTH = 8
"""Shorter values are refused: replacing a 3-letter "secret" everywhere would corrupt bodies."""

SECRET_ENV_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET")
"""Environment variables treated as secrets by `environment_secrets` (e.g. OPENAI_API_KEY)."""

_KEY_PARAM = re.compile(r"(?<=[?&])(" + "|".join(SCRUBBED_QUERY_PARAMS) + r")=[^&#]*")


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of credential-looking environment variables, long enough to scrub safely."""
    env = os.environ if environ is None else environ
    return sorted(
        {v for k, v in env.items() if k.upper().endswith(SECRET_ENV_SUFFIXES) and len(v) >= MIN_SECRET_LENGTH}
    )


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
        return self.text(_KEY_PARAM.sub(lambda m: f"{m.group(1)}={PLACEHOLDER}", uri))

    def body(self, body: Any) -> Any:
        if isinstance(body, (bytes, bytearray)):
            return self.data(bytes(body))
        if isinstance(body, str):
            return self.text(body)
        return body

    def request(self, request: VcrRequest) -> VcrRequest:
        """A scrubbed copy of a vcrpy request (vcrpy's `before_record_request`)."""
        headers = {
            name: PLACEHOLDER if name.lower() in SCRUBBED_REQUEST_HEADERS else self.text(str(value))
            for name, value in request.headers.items()
        }
        return VcrRequest(request.method, self.uri(request.uri), self.body(request.body), headers)

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """A scrubbed, decompressed copy of a vcrpy response dict (vcrpy's `before_record_response`)."""
        response = decode_response(response)  # deep-copies; gzip/deflate/br bodies become plain
        headers: dict[str, list[str]] = {}
        for name, values in (response.get("headers") or {}).items():
            listed = values if isinstance(values, list) else [values]
            if name.lower() in SCRUBBED_RESPONSE_HEADERS:
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


_HEADER_IN_LOG = re.compile(
    r"""(?i)(['"](?:""" + "|".join(sorted(SCRUBBED_REQUEST_HEADERS | SCRUBBED_RESPONSE_HEADERS))
    + r""")['"]\s*[,:]\s*b?['"])([^'"]*)(?=['"])"""
)
"""A scrubbed header's value as logged in a repr: `(b'set-cookie', b'...')` or `'api-key': '...'`."""


class SecretLogFilter(logging.Filter):
    """Redacts `key=` parameters, scrubbed headers' values and every live Scrubber's secrets.

    vcrpy logs the raw request URL before it is scrubbed (a Gemini `key=` parameter with it),
    httpx2 logs every request URL at INFO, httpcore2's DEBUG trace prints response headers
    (set-cookie, organization ids) and the SDKs' DEBUG logs print request bodies and response
    headers; this filter sits on those loggers. It costs nothing while they are not enabled for
    the record's level.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _KEY_PARAM.sub(lambda m: f"{m.group(1)}={PLACEHOLDER}", message)
        cleaned = _HEADER_IN_LOG.sub(lambda m: m.group(1) + PLACEHOLDER, cleaned)
        for scrubber in list(_LIVE):
            cleaned = scrubber.text(cleaned)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return True


REDACTED_LOGGERS = (
    "vcr.stubs.httpx_stubs", "vcr.cassette", "vcr.request", "httpx2",
    "httpcore2.connection", "httpcore2.http11", "httpcore2.http2", "httpcore2.proxy", "httpcore2.socks",
    "openai._base_client", "anthropic._base_client", "google_genai._api_client", "google_genai.models",
)
"""Every logger that sees raw requests or responses: vcrpy, httpx2/httpcore2 and the SDKs' DEBUG
request/response logs (a filter is not inherited by child loggers, so each is listed)."""


_installed = False


def install_log_filter() -> None:
    """Attach one SecretLogFilter to each logger that can see raw requests (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretLogFilter) for f in logger.filters):
            logger.addFilter(SecretLogFilter())
