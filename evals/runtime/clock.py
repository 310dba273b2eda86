"""The runtime's one wall-clock read.

Every router and loop method takes `now_ms`; only when the caller passes none is this called,
so an audit is reproducible whenever the caller supplies the time.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the Unix epoch: the default clock, read nowhere else."""
    return time.time_ns() // 1_000_000
