"""Every error xpeval reports as one clear line, under one root, and the exit codes every command
keeps (README.md, `xpeval --help`).

`UserError` is the root: the input is wrong (a flag, a file, a project setting, a plugin's entry,
a cassette), and the CLI prints its message in one line and exits with its type's `exit_code`.
Anything else that escapes a command is a bug in xpeval or a plugin (`ExitCode.INTERNAL`).

    UserError                          exit 2
      MissingExtraError                exit 3: an optional dependency is not installed
      RegistryError (ValueError)       the adapter registry refuses an entry, or is inconsistent
        UnknownAdapterError (LookupError)   an adapter id nothing registered
        RefusedPluginError             an adapter in use that a refused plugin meant to register
        AdapterFactoryError            a plugin adapter's factory raised or built no Adapter
      WireError (ValueError)           a wire that cannot be registered
      DialectError (ValueError)        a schema dialect that cannot be registered
      CassetteError                    a cassette that cannot be read, or is over the input limits

The second bases are the ones these errors had before they shared a root, so code that caught
them as `ValueError` or `LookupError` still does. The errors a room raises for its own input
subclass `UserError` where they are defined (a case file's, a results file's, a merge's).
"""

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


class RegistryError(UserError, ValueError):
    """The adapter registry refuses an entry, or is inconsistent (a cycle, a bad wire or dialect)."""


class UnknownAdapterError(RegistryError, LookupError):
    """An adapter id (or a contract parent) that the registry does not know; the message names
    the closest known id and, when one meant to offer it, the refused plugin."""

    def __init__(self, message: str, adapter_id: str) -> None:
        super().__init__(message)
        self.adapter_id = adapter_id


class RefusedPluginError(RegistryError):
    """An adapter in use is one a refused plugin meant to register or changed."""


class AdapterFactoryError(RegistryError):
    """A plugin adapter's factory raised, or built something that is not an `Adapter`."""


class WireError(UserError, ValueError):
    """A wire that cannot be registered; its message is the one line that says what to fix."""


class DialectError(UserError, ValueError):
    """A schema dialect that cannot be registered; its message says what to fix."""


class CassetteError(UserError):
    """A cassette that cannot be read (or is over the project's input limits): one line naming
    the file."""
