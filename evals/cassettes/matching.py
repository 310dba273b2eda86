"""Which recorded interaction answers a request: method + path + query + canonical JSON body.

The rule: two requests match when their method, URL path, query parameters (all but the
scrubbed `key`) and JSON bodies are equal, the bodies compared after canonical serialization
(sorted keys, no whitespace). Scheme, host and port are ignored (the local server's and the
emulator's ports vary; an emulated recording carries the provider's host). Headers are ignored
(they carry credentials and SDK versions). A field the adapter stops sending, or starts
sending, changes the body: that is drift and a miss, never a pass.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from vcr.matchers import method as vcr_method
from vcr.matchers import path as vcr_path

from xpeval.adapters.secrets import is_credential_param


def _ignored(name: str) -> bool:
    """Credential-like parameters (Gemini's `key`, a `token` in a base URL) are scrubbed when
    recorded, so never compared."""
    return is_credential_param(name)


VOLATILE_FIELDS: tuple[str, ...] = ()
"""Top-level request-body fields left out of matching because they change on every run.

Empty on purpose: every adapter builds its body from the case alone (no timestamps, nonces or
random ids), so every field is compared. An entry added here must say which provider sends it
and why it cannot be pinned.
"""

RequestKey = tuple[str, str, tuple[tuple[str, str], ...], str | bytes]
"""(METHOD, path, sorted query pairs, canonical body): equal keys are matching requests."""

MAX_DIFF_LINES = 60


def canonical_body(body: bytes | str | None) -> str | bytes:
    """The body as compact, key-sorted JSON text; bytes unchanged when it is not JSON."""
    if body is None:
        return b""
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    if not raw.strip():
        return b""
    try:
        document = json.loads(raw)
        if VOLATILE_FIELDS and isinstance(document, dict):
            document = {k: v for k, v in document.items() if k not in VOLATILE_FIELDS}
        return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError):
        return raw


def canonical_query(query: str) -> tuple[tuple[str, str], ...]:
    if not query:
        return ()
    pairs = parse_qsl(query, keep_blank_values=True)
    return tuple(sorted((k, v) for k, v in pairs if not _ignored(k)))


def request_key(method: str, uri: str, body: bytes | str | None) -> RequestKey:
    parts = urlsplit(uri)
    return (method.upper(), parts.path or "/", canonical_query(parts.query), canonical_body(body))


def requests_fingerprint(keys: Iterable[RequestKey]) -> str:
    """sha256 over the canonical requests, in order."""
    digest = hashlib.sha256()
    for method, path, query, body in keys:
        text = body if isinstance(body, str) else body.hex()
        digest.update(json.dumps([method, path, list(query), text], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def describe(key: RequestKey) -> str:
    """`METHOD /path?query` of a key, as a person reads it."""
    method, path, query, _ = key
    suffix = "?" + "&".join(f"{k}={v}" for k, v in query) if query else ""
    return f"{method} {path}{suffix}"


def readable_body(body: str | bytes) -> list[str]:
    """The canonical body laid out one field per line, for diffs."""
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace").splitlines()
    try:
        return json.dumps(json.loads(body), indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    except (ValueError, RecursionError):
        return body.splitlines()


def request_diff(recorded: RequestKey, current: RequestKey, recorded_label: str) -> list[str]:
    """A unified diff of a recorded request against the one sent now (at most MAX_DIFF_LINES)."""
    lines: list[str] = []
    if recorded[:3] != current[:3]:
        lines.append(f"  request line: recorded {describe(recorded)}, now {describe(current)}")
    diff = list(
        difflib.unified_diff(
            readable_body(recorded[3]),
            readable_body(current[3]),
            recorded_label,
            "sent now",
            n=2,
            lineterm="",
        )
    )
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
    return lines + diff


def closest(
    current: RequestKey, candidates: Sequence[tuple[int, RequestKey]]
) -> tuple[int, RequestKey] | None:
    """The candidate most like `current`: same request line first, then the most similar body."""
    if not candidates:
        return None
    current_lines = readable_body(current[3])

    def score(item: tuple[int, RequestKey]) -> tuple[int, float]:
        key = item[1]
        same_line = int(key[:2] == current[:2]) + int(key[:3] == current[:3])
        ratio = difflib.SequenceMatcher(None, readable_body(key[3]), current_lines, autojunk=False).ratio()
        return same_line, ratio

    return max(candidates, key=score)


# --- the same rule as vcrpy matchers, for vcrpy's own machinery and for plain `use_cassette` ---


def query_without_credentials(r1: Any, r2: Any) -> None:
    """vcrpy matcher: query parameters equal, the scrubbed credential parameters aside."""
    q1, q2 = canonical_query(r1.parsed_uri.query), canonical_query(r2.parsed_uri.query)
    if q1 != q2:
        raise AssertionError(f"{q1} != {q2}")


def json_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: bodies equal as canonical JSON (as raw bytes when not JSON)."""
    if canonical_body(r1.body) != canonical_body(r2.body):
        raise AssertionError("the request bodies differ")


VCR_MATCH_ON = (vcr_method, vcr_path, query_without_credentials, json_body)
"""The matching rule as vcrpy `match_on` functions (equal keys <=> every matcher passes)."""
