"""Eval cases: the case model, the loader for case files, the built-in set and the BFCL import."""

from __future__ import annotations

from xpeval.evals.cases.acceptable import OPTIONAL, normalize_string, value_acceptable
from xpeval.evals.cases.loader import BUILTIN_DIR, LoadedCase, load_case_file, load_cases
from xpeval.evals.cases.model import (
    CATEGORIES,
    Case,
    Category,
    Decision,
    Expected,
    ExpectedCall,
    FollowUp,
    ScriptedOutput,
    Turn,
)
from xpeval.evals.cases.scripted import ScriptedToolError, UnscriptedCallError, scripted_handler

__all__ = [
    "BUILTIN_DIR",
    "CATEGORIES",
    "OPTIONAL",
    "Case",
    "Category",
    "Decision",
    "Expected",
    "ExpectedCall",
    "FollowUp",
    "LoadedCase",
    "ScriptedOutput",
    "ScriptedToolError",
    "Turn",
    "UnscriptedCallError",
    "load_case_file",
    "load_cases",
    "normalize_string",
    "scripted_handler",
    "value_acceptable",
]
