"""What never reaches a file or a log: credentials, account identifiers and configured secrets.

One scrubber, applied at every boundary that writes or prints: to every interaction before it
is kept in a cassette (vcrpy's `before_record_request` and `before_record_response` hooks) and
to every incoming request before it is matched, so a request still matches its scrubbed
recording; to every result row before it is written (`scrub_value`); to every line printed or
written into a report (`scrub_line`: the run's announcement of its targets, the nightly's
summaries, the CLI's errors); and, through a log filter, to every log line of the libraries that
see raw requests. What is replaced:
- the request headers that carry a registered provider's credentials (each provider states
  them as data: `Provider.secret_headers`), plus `cookie` and `proxy-authorization`;
- the response headers that identify an account (`Provider.secret_response_headers`), plus
  `set-cookie`;
- in every URL and line, the user info (`http://user:password@host`) and every credential-like
  query parameter's value (`xpeval.adapters.secrets.is_credential_param`: key, token, sig,
  code, client_secret, ... in any case);
- every secret value, anywhere: each key xpeval handed to an SDK (`xpeval.adapters.secrets`), each
  credential-looking environment variable and each configured secret, in URLs, any header,
  request and response bodies (compressed bodies are decompressed first, within the input
  limits, so nothing hides inside gzip), as written, as JSON-escaped and as URL-encoded text —
  also when a provider echoes one back, and also when its echo is split across the frames of a
  stream: the text the frames spell together is scrubbed, and what is left of it goes back
  into the frames (`Scrubber.stream`), so no frame keeps a piece of it.
"""

from __future__ import annotations

import copy
import itertools
import json
import logging
import os
import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

from vcr.request import Request as VcrRequest

from xpeval.adapters import secrets
from xpeval.adapters.secrets import MIN_SECRET_LENGTH, is_credential_param
from xpeval.evals.project import input_limits
from xpeval.evals.stream_frames import StreamBody, is_eventstream
from xpeval.evals.untrusted import DecodeBudget, InputRefused, decompress

PLACEHOLDER = secrets.PLACEHOLDER
GENERIC_REQUEST_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
GENERIC_RESPONSE_HEADERS = frozenset({"set-cookie"})

SECRET_ENV_WORDS = frozenset({"KEY", "TOKEN", "SECRET", "PASSWORD"})
"""Environment variables with one of these words among the parts of their name are treated as
secrets by `environment_secrets`: at the end (OPENAI_API_KEY) or inside it
(AWS_BEARER_TOKEN_BEDROCK, Bedrock's documented variable), so a provider's key is scrubbed from
every recording of the run, also those made before its own adapter was built."""

_QUERY_PARAM = re.compile(r"(?<=[?&;])([^=&#\s'\"?;]+)=([^&#\s'\";]*)")
_USER_INFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/?#@\s'\"]+)@")

PIECE = MIN_SECRET_LENGTH
"""A piece of a secret: a run of at least this many characters of which every `PIECE` in a row
are `PIECE` characters in a row of a known secret (see `Scrubber.stream`)."""


CUT_PIECE = 6
"""In a line cut before xpeval could scrub it whole (`Scrubber.cut_line`), this many characters
in a row of a secret are taken for what is left of it."""


def _piece_starts(values: list[str], size: int) -> re.Pattern[str] | None:
    """Where a piece of `size` characters of one of `values` starts, overlapping ones too: one
    C-level scan of a text."""
    pieces = sorted({v[i : i + size] for v in values for i in range(len(v) - size + 1)})
    return re.compile("(?=(?:" + "|".join(map(re.escape, pieces)) + "))") if pieces else None


def _runs(starts: re.Pattern[str], text: str, size: int) -> list[tuple[int, int]]:
    """[start, end) of every maximal run of `text` in which each `size` characters in a row are
    `size` characters in a row of a secret."""
    runs: list[tuple[int, int]] = []
    for hit in starts.finditer(text):
        index = hit.start()
        if runs and runs[-1][1] >= index + size - 1:
            runs[-1] = (runs[-1][0], index + size)
        else:
            runs.append((index, index + size))
    return runs


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

    def replaced(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"{name}={PLACEHOLDER}" if is_credential_param(unquote(name)) else match.group(0)

    return _QUERY_PARAM.sub(replaced, text) if "=" in text else text


def scrub_url_credentials(text: str) -> str:
    """The user info of every URL (`http://user:password@host`) and every credential-like query
    parameter's value replaced, in a URL or in any line holding URLs."""
    if "@" in text:
        text = _USER_INFO.sub(lambda m: f"{m.group(1)}{PLACEHOLDER}@", text)
    return scrub_query(text)


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of credential-looking environment variables, and the credentials inside URL-valued
    ones (a base URL's `?token=...` value, its `user:password@`), long enough to scrub safely."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if SECRET_ENV_WORDS & set(k.upper().split("_"))}
    for value in env.values():
        if "://" in value:
            found.update(_url_secrets(value))
    return sorted(v for v in found if len(v) >= MIN_SECRET_LENGTH)


def _url_secrets(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # not a URL after all
        return []
    found = [v for k, v in parse_qsl(parts.query) if is_credential_param(k)]
    return [*found, unquote(password)] if password else found


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
        self._piece_starts = _piece_starts(self._text, PIECE)
        self._cut_piece_starts: re.Pattern[str] | None = None
        _LIVE.add(self)

    @property
    def has_secrets(self) -> bool:
        return bool(self._text)

    def text(self, value: str) -> str:
        """Every secret value replaced (bodies, header values)."""
        for variant in self._text:
            if variant in value:
                value = value.replace(variant, PLACEHOLDER)
        return value

    def data(self, value: bytes) -> bytes:
        for variant, placeholder in self._bytes:
            if variant in value:
                value = value.replace(variant, placeholder)
        return value

    def line(self, value: str) -> str:
        """Every secret value and every URL's credentials replaced: a URL, a printed or logged
        line, a report."""
        return self.text(scrub_url_credentials(value))

    def body(self, body: Any) -> Any:
        if isinstance(body, (bytes, bytearray)):
            return self.data(bytes(body))
        if isinstance(body, str):
            return self.text(body)
        return body

    def stream(self, body: bytes) -> bytes:
        """A streamed body whose frames keep no piece of a secret split across them.

        For each JSON path of the frames (`xpeval.evals.stream_frames`), the fragments are joined
        into the text they spell; every piece of a secret (see `PIECE`) that touches the start or
        the end of a fragment — an echo split across frames, or the part of one a cut stream
        kept — is replaced in that text by one placeholder, and the frames get back what is
        left of it: the placeholder in the frame where the piece began, nothing of it in the
        others. A whole secret inside one fragment is left to `data`, which follows — except in
        a framing with lengths and checksums (AWS eventstream), where replacing bytes would
        break the frame: there every value of every message is scrubbed here, and each changed
        message is encoded again with its lengths and checksums right, so the recording still
        replays."""
        frames = StreamBody.parse(body) if self._piece_starts is not None else None
        if frames is None:
            return body
        for fragments in frames.channels().values():
            texts = [fragment.text for fragment in fragments]
            for fragment, text in zip(fragments, self._without_pieces(texts), strict=True):
                if text != fragment.text:
                    frames.replace(fragment, text)
        if frames.checksummed:
            frames.scrub_each(self.text, self.data)
        return frames.render()

    def streamed_body(self, body: bytes) -> bytes:
        """A response body with no secret and no piece of one split across frames, its framing
        intact (what a cassette keeps)."""
        framed = self.stream(body)
        return framed if is_eventstream(framed) else self.data(framed)

    def _without_pieces(self, texts: list[str]) -> list[str]:
        joined = "".join(texts)
        bounds = [0]
        for text in texts:
            bounds.append(bounds[-1] + len(text))
        runs = [run for run in self._piece_runs(joined) if any(run[0] <= b <= run[1] for b in bounds)]
        if not runs:
            return texts
        out = []
        for start, end in itertools.pairwise(bounds):
            kept, position = [], start
            for run_start, run_end in runs:
                if run_end <= start or run_start >= end:
                    continue
                kept.append(joined[position : max(run_start, start)])
                if run_start >= start:
                    kept.append(PLACEHOLDER)
                position = min(run_end, end)
            kept.append(joined[position:end])
            out.append("".join(kept))
        return out

    def _piece_runs(self, text: str) -> list[tuple[int, int]]:
        """[start, end) of every maximal run of `text` in which each `PIECE` characters in a row
        are `PIECE` characters in a row of a secret."""
        assert self._piece_starts is not None
        return _runs(self._piece_starts, text, PIECE)

    def cut_line(self, value: str) -> str:
        """A line something else cut before xpeval saw it (an SDK's log line showing the first
        100 characters of a frame, pydantic's shortened `input_value`): `line`, and every run
        of `CUT_PIECE` or more characters of a secret replaced too, wherever it sits, since
        the cut may have left any part of one."""
        value = self.line(value)
        if not self._text:
            return value
        if self._cut_piece_starts is None:
            self._cut_piece_starts = _piece_starts(self._text, CUT_PIECE)
        assert self._cut_piece_starts is not None
        runs = _runs(self._cut_piece_starts, value, CUT_PIECE)
        for start, end in reversed(runs):
            value = value[:start] + PLACEHOLDER + value[end:]
        return value

    def request(self, request: VcrRequest) -> VcrRequest:
        """A scrubbed copy of a vcrpy request (vcrpy's `before_record_request`)."""
        secret_headers, _ = _provider_headers()
        headers = {
            name: PLACEHOLDER if name.lower() in secret_headers else self.line(str(value))
            for name, value in request.headers.items()
        }
        return VcrRequest(request.method, self.line(request.uri), self.body(request.body), headers)

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """A scrubbed, decompressed copy of a vcrpy response dict (vcrpy's `before_record_response`)."""
        response = _decoded(response)
        _, secret_headers = _provider_headers()
        headers: dict[str, list[str]] = {}
        for name, values in (response.get("headers") or {}).items():
            listed = values if isinstance(values, list) else [values]
            if name.lower() in secret_headers:
                headers[name] = [PLACEHOLDER for _ in listed]
            else:
                headers[name] = [self.line(str(v)) for v in listed]
        body = response.get("body") or {}
        if isinstance(body, dict) and "string" in body:
            before = body["string"]
            body["string"] = self._body_of_response(before)
            if body["string"] != before:
                for name in headers:
                    if name.lower() == "content-length":
                        headers[name] = [str(len(body["string"]))]
        response["headers"] = headers
        return response

    def _body_of_response(self, body: Any) -> Any:
        """A response body scrubbed, frames of a stream first (see `stream`)."""
        if not self.has_secrets:
            return body
        if isinstance(body, (bytes, bytearray)):
            return self.streamed_body(bytes(body))
        if isinstance(body, str):
            return self.text(self.stream(body.encode()).decode("utf-8", "replace"))
        return body


def _decoded(response: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a vcrpy response with a gzip or deflate body decoded (within the input
    limits) and its content-encoding header dropped; a body that does not decode is kept as it
    is, as vcrpy's own `decode_response` does."""
    response = copy.deepcopy(response)
    headers = response.get("headers") or {}
    name, encoding = _content_encoding(headers)
    body = response.get("body") or {}
    raw = body.get("string") if isinstance(body, dict) else None
    if name is None or encoding not in ("gzip", "deflate") or not isinstance(raw, (bytes, bytearray)):
        return response
    limits = input_limits()
    try:
        body["string"] = decompress(bytes(raw), encoding, DecodeBudget.of(limits), limits)
    except ValueError:
        return response
    except InputRefused as exc:
        raise InputRefused(f"a response too large to record: {exc}") from exc
    del headers[name]
    for key in [k for k in headers if k.lower() == "content-length"]:
        headers[key] = [str(len(body["string"]))]
    return response


def _content_encoding(headers: dict[str, Any]) -> tuple[str | None, str]:
    """(the header's name as recorded, its first value in lower case)."""
    name = next((k for k in headers if k.lower() == "content-encoding"), None)
    values = headers.get(name) if name else None
    first = values[0] if isinstance(values, list) and values else values
    return name, str(first or "").lower()


_LIVE: weakref.WeakSet[Scrubber] = weakref.WeakSet()


def _header_in_log(names: frozenset[str]) -> re.Pattern[str]:
    """A secret header's value as logged in a repr: `(b'set-cookie', b'...')` or `'api-key': '...'`."""
    listed = "|".join(re.escape(name) for name in sorted(names))
    return re.compile(r"""(?i)(['"](?:""" + listed + r""")['"]\s*[,:]\s*b?['"])([^'"]*)(?=['"])""")


class SecretLogFilter(logging.Filter):
    """Redacts URLs' credentials, scrubbed headers' values and every live Scrubber's secrets.

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
        message = original = record.getMessage()
        if record.exc_info:  # the traceback's last line is the exception's message: scrubbed too
            message = f"{message}\n{_TRACEBACKS.formatException(record.exc_info)}"
            record.exc_info, record.exc_text = None, None
        cleaned = scrub_url_credentials(message)
        cleaned = self._headers.sub(lambda m: m.group(1) + PLACEHOLDER, cleaned)
        for scrubber in [*list(_LIVE), current_scrubber()]:
            cleaned = scrubber.cut_line(cleaned)
        if cleaned != original:
            record.msg, record.args = cleaned, ()
        return True


_TRACEBACKS = logging.Formatter()


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


def scrub_line(text: str) -> str:
    """A line about to be printed or written (an announcement, a report, an error) with every
    URL's credentials and every secret known right now replaced."""
    return current_scrubber().line(text)


def scrub_value(value: Any, scrubber: Scrubber | None = None) -> Any:
    """`value` with every secret replaced in every string it holds (dict keys included)."""
    scrubber = scrubber or current_scrubber()
    if not scrubber.has_secrets:
        return value
    return _scrubbed(value, scrubber)


def _scrubbed(value: Any, scrubber: Scrubber) -> Any:
    if isinstance(value, str):
        return scrubber.line(value)
    if isinstance(value, dict):
        return {_scrubbed(k, scrubber): _scrubbed(v, scrubber) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item, scrubber) for item in value]
    return value


secrets.use_redactor(scrub_line)
"""What the adapters scrub a text with before they cut it (`xpeval.adapters.secrets.redacted`)."""
