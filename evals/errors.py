"""Errors the CLI reports as one clear line (no traceback) and a non-zero exit."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user or a file: a clear message, exit status 2."""

    exit_code = 2
