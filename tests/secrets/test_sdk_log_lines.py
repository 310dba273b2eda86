"""What the SDKs log reaches stderr without a secret: on the loggers each provider states (the
root logger among cohere's), also a line the SDK cut before the filter saw it, and also a
record's traceback."""

from __future__ import annotations

import logging
import random
import string
from collections.abc import Iterator

import pytest

from xpeval.adapters import secrets
from xpeval.evals.scrub import CUT_PIECE, SecretLogFilter, redacted_loggers

KEY = "".join(random.SystemRandom().choices(string.ascii_letters, k=26))


@pytest.fixture(autouse=True)
def _key_registered() -> Iterator[None]:
    secrets.register(KEY)
    yield
    secrets.forget_all()


def shown(record: logging.LogRecord) -> str:
    SecretLogFilter().filter(record)
    return logging.Formatter().format(record)


def record(message: str, *args: object, exc_info: object = None) -> logging.LogRecord:
    return logging.LogRecord("root", logging.WARNING, __file__, 1, message, args, exc_info)  # type: ignore[arg-type]


def test_the_bundled_sdks_loggers_are_filtered_the_root_logger_among_them() -> None:
    names = set(redacted_loggers())
    assert {"root", "cohere.core.pydantic_utilities", "mistralai.client", "botocore.parsers"} <= names


def test_a_line_an_sdk_cut_keeps_no_run_of_the_key() -> None:
    # cohere logs a frame cut to its first 100 characters: the key's first 9 characters end the line
    line = shown(record("Failed to parse SSE data field as JSON, data: %s", ("x" * 91 + KEY)[:100]))
    assert not [
        KEY[i : i + CUT_PIECE] for i in range(len(KEY) - CUT_PIECE + 1) if KEY[i : i + CUT_PIECE] in line
    ]
    assert line.endswith("x<scrubbed>")


def test_a_records_traceback_is_scrubbed_with_its_message() -> None:
    try:
        raise ValueError(f"bad frame {KEY}")
    except ValueError as exc:
        line = shown(record("Request Exception", exc_info=(type(exc), exc, exc.__traceback__)))
    assert "ValueError: bad frame <scrubbed>" in line and KEY not in line
