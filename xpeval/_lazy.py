"""Lazy package exports: a package lists its public names and the modules that define them, and
each module is imported when one of its names is first used.

So importing a package (and every `from xpeval.evals.cases import Case`) costs only the modules
the caller uses: `xpeval --help` imports no SDK and no pandas (`tests/test_cli_startup.py`).
A package uses it as

    _EXPORTS = {"Case": "xpeval.evals.cases.model", ...}
    __all__ = sorted(_EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    if TYPE_CHECKING:                                 # the names as mypy and IDEs see them
        from xpeval.evals.cases.model import Case as Case

A name is written twice, in `_EXPORTS` (run time) and in the `TYPE_CHECKING` block (what type
checkers see; one left out there is `Any` to them): `tests/test_lazy_exports.py` holds the two
equal for every package that uses this.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`: a public name comes from its module
    (and is kept on the package), and `dir(package)` lists the public names, imported or not."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = module.partition(":")  # "module:attribute" exports it under another name
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
