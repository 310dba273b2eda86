"""A guarded environment call cannot reach the host and is stopped past its time or memory bound;
outside a guarded call nothing is refused."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xpeval.evals.runtime.environment import EnvironmentLimit, Limits, guarded


def test_a_guarded_call_cannot_open_a_host_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host data")
    with pytest.raises(EnvironmentLimit, match="may not use the host"):
        guarded(secret.read_text)
    assert secret.read_text() == "host data"  # the hook is inert once the call is over


def test_a_guarded_call_cannot_start_a_process_or_open_a_socket() -> None:
    with pytest.raises(EnvironmentLimit, match="subprocess"):
        guarded(lambda: subprocess.run(["true"], check=False))
    with pytest.raises(EnvironmentLimit, match="socket"):
        guarded(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))


def test_a_call_that_swallows_exceptions_still_stops_at_its_time_bound() -> None:
    def spin() -> str:
        try:
            while True:
                len("spin")
        except Exception:  # as BFCL's methods do: the bound is not an Exception
            return "swallowed"

    started = time.monotonic()
    with pytest.raises(EnvironmentLimit, match="time bound"):
        guarded(spin, Limits(time_s=0.2))
    assert time.monotonic() - started < 5


def test_a_call_that_keeps_allocating_stops_at_its_memory_bound() -> None:
    kept: list[bytes] = []

    def grow() -> None:
        for _ in range(4096):  # up to 4 GB, far past the bound
            kept.append(b"x" * (1 << 20))  # written, so resident

    try:
        with pytest.raises(EnvironmentLimit, match="memory bound"):
            guarded(grow, Limits(memory_bytes=64 << 20))
        assert len(kept) < 1024
    finally:
        kept.clear()


def test_a_guarded_call_returns_its_value() -> None:
    assert guarded(lambda: sorted([3, 1, 2])) == [1, 2, 3]


def test_a_fresh_process_can_parse_dates_in_a_guarded_call() -> None:
    # datetime.strptime imports a module on first use, which a guarded call may not do: the
    # environment module imports it beforehand (BFCL's TradingBot and TravelAPI parse dates).
    code = (
        "from datetime import datetime\n"
        "from xpeval.evals.runtime.environment import guarded\n"
        "print(guarded(lambda: datetime.strptime('2024-03-01', '%Y-%m-%d').year))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "2024", done.stderr
