"""Model-supplied tool arguments -> a validated value, or a one-line reason why not.

One path for every caller (registry and router): JSON text is parsed with the same rule the
wires use (`xpeval.adapters.wires.parse_arguments`: blank text means no arguments), a mapping is taken
as is, and the tool's pydantic input model, when there is one, validates the resulting object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from xpeval.adapters.wires import parse_arguments
from xpeval.evals.runtime.tool_errors import describe_exception


@dataclass(frozen=True, slots=True)
class CheckedArguments:
    """The outcome of validating one call's arguments: `value` when ok, else `error`."""

    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def check_arguments(input_model: type[BaseModel] | None, raw: object) -> CheckedArguments:
    """Validate `raw` against `input_model` (a dict when there is no model); never raises.

    Arguments must form a JSON object; the error is one line naming each failing field.
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return CheckedArguments(error="arguments are not UTF-8 text")
    if raw is None or isinstance(raw, str):
        parsed, reason = parse_arguments(raw)
        if reason is not None:
            return CheckedArguments(error=reason)
        raw = parsed
    if not isinstance(raw, Mapping):
        return CheckedArguments(error=f"arguments are not a JSON object (got {type(raw).__name__})")
    if input_model is None:
        return CheckedArguments(value=dict(raw))
    try:
        return CheckedArguments(value=input_model.model_validate(dict(raw)))
    except ValidationError as exc:
        return CheckedArguments(error=_validation_summary(exc))
    except RecursionError:
        return CheckedArguments(error="arguments nest too deeply to validate")
    except Exception as exc:  # a custom validator raising TypeError escapes pydantic's wrapping
        return CheckedArguments(error=describe_exception(exc))


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False):
        location = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        parts.append(f"{location}: {error['msg']}")
    return "; ".join(parts) or describe_exception(exc)
