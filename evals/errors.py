"""Errors the CLI reports as one clear line (no traceback) and a non-zero exit, and the exit
codes every command keeps (README.md, `xpeval --help`)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What an `xpeval` exit status means, the same for every command, so CI can tell a failed
    verdict from a broken input or a crash."""

    PASSED = 0
    FAILED = 1  # the verdict failed: a regression, a vendor out of line, a refused schema
    BAD_INPUT = 2  # the input is wrong: a flag, a file, a project setting
    MISSING_EXTRA = 3  # an optional dependency is not installed: one line names the extra
    INTERNAL = 4  # a bug in xpeval or a plugin: `--debug` (or XPEVAL_DEBUG=1) shows the traceback
    INTERRUPTED = 130


class UserError(Exception):
    """Bad input from the user or a file: a clear message, exit status 2."""

    exit_code: int = ExitCode.BAD_INPUT


class MissingExtraError(UserError):
    """An optional dependency a command needs is not installed: names the extra and the pip
    command that installs it from where this xpeval came from."""

    exit_code = ExitCode.MISSING_EXTRA

    def __init__(self, extra: str, what_is_missing: str) -> None:
        from xpeval.evals.extras import install_command

        super().__init__(f"{what_is_missing}: install the '{extra}' extra: {install_command(extra)}")
        self.extra = extra
