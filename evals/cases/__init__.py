"""Eval cases: the case model, the loader for case files, the built-in set and the BFCL import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xpeval._lazy import lazy_exports

_EXPORTS = {
    "BUILTIN_DIR": "xpeval.evals.cases.loader",
    "CATEGORIES": "xpeval.evals.cases.model",
    "OPTIONAL": "xpeval.evals.cases.acceptable",
    "Case": "xpeval.evals.cases.model",
    "Category": "xpeval.evals.cases.model",
    "Decision": "xpeval.evals.cases.model",
    "Expected": "xpeval.evals.cases.model",
    "ExpectedCall": "xpeval.evals.cases.model",
    "FollowUp": "xpeval.evals.cases.model",
    "LoadedCase": "xpeval.evals.cases.loader",
    "ScriptedOutput": "xpeval.evals.cases.model",
    "ScriptedToolError": "xpeval.evals.cases.scripted",
    "Turn": "xpeval.evals.cases.model",
    "UnscriptedCallError": "xpeval.evals.cases.scripted",
    "load_case_file": "xpeval.evals.cases.loader",
    "load_cases": "xpeval.evals.cases.loader",
    "normalize_string": "xpeval.evals.cases.acceptable",
    "scripted_handler": "xpeval.evals.cases.scripted",
    "value_acceptable": "xpeval.evals.cases.acceptable",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # the names as mypy and IDEs see them (`X as X`: exported on purpose)
    from xpeval.evals.cases.acceptable import OPTIONAL as OPTIONAL
    from xpeval.evals.cases.acceptable import normalize_string as normalize_string
    from xpeval.evals.cases.acceptable import value_acceptable as value_acceptable
    from xpeval.evals.cases.loader import BUILTIN_DIR as BUILTIN_DIR
    from xpeval.evals.cases.loader import LoadedCase as LoadedCase
    from xpeval.evals.cases.loader import load_case_file as load_case_file
    from xpeval.evals.cases.loader import load_cases as load_cases
    from xpeval.evals.cases.model import CATEGORIES as CATEGORIES
    from xpeval.evals.cases.model import Case as Case
    from xpeval.evals.cases.model import Category as Category
    from xpeval.evals.cases.model import Decision as Decision
    from xpeval.evals.cases.model import Expected as Expected
    from xpeval.evals.cases.model import ExpectedCall as ExpectedCall
    from xpeval.evals.cases.model import FollowUp as FollowUp
    from xpeval.evals.cases.model import ScriptedOutput as ScriptedOutput
    from xpeval.evals.cases.model import Turn as Turn
    from xpeval.evals.cases.scripted import ScriptedToolError as ScriptedToolError
    from xpeval.evals.cases.scripted import UnscriptedCallError as UnscriptedCallError
    from xpeval.evals.cases.scripted import scripted_handler as scripted_handler
