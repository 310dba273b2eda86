"""The default schema-acceptance report, measured again only when what it measures changed.

The measurement (hypothesis instances in worker processes, ~20 s) depends only on the tool
files, the code that rewrites, sends and judges them, the registered adapters and the settings.
Its key is a hash of all of these, written next to the report as `schema_acceptance.key`
(JSON: the key, the parts it was made from and a hash of each report file). When the key
written there is the key of now and both report files are the ones written with it, the
report is current: nothing is measured. A report overwritten since (`xpeval schemas --tools
... --reports reports` writes the same file names) no longer matches its recorded hash, so it
is measured again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from xpeval.adapters.registry import adapter_ids, effective_contract
from xpeval.evals.acceptance.fidelity import DEFAULT_EXAMPLES, DEFAULT_SECONDS
from xpeval.evals.acceptance.sources.tool_files import tool_files

KEY_FORMAT = 1
"""Raised when the key's contents change meaning, so an old key never matches."""
KEY_FILE = "schema_acceptance.key"
PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent

MEASURED_CODE: tuple[str, ...] = ("adapters", "evals/acceptance")
"""The code whose every `.py` file the report depends on, relative to the project root: the
dialect passes and wires (`adapters/`), the acceptance checker, and the measurement itself
(this package: reading, measuring, fidelity, the tables)."""

LIBRARIES = (
    "hypothesis",
    "hypothesis-jsonschema",
    "jsonschema",
    "referencing",
    "pydantic",
    "openai",
    "anthropic",
    "google-genai",
    "pandas",
    "tabulate",
)
"""Installed packages whose version changes what is measured or written: the instance
generator and validator, the SDK types the wires build, the table writers."""


def code_files(roots: Iterable[str] = MEASURED_CODE, base: Path = PROJECT_ROOT) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        path = base / root
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else []
    return files


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def key_parts(
    corpus: Path,
    *,
    adapters: Sequence[str],
    examples: int,
    seconds: float,
    fidelity: bool,
    code: Sequence[Path] | None = None,
) -> dict[str, Any]:
    """Everything the report depends on, by content: file hashes, adapter contracts, settings."""
    measured = code_files() if code is None else list(code)
    return {
        "format": KEY_FORMAT,
        "corpus": {path.relative_to(corpus).as_posix(): _digest(path) for path in tool_files(corpus)},
        "code": {_relative(path): _digest(path) for path in measured},
        "adapters": [
            [adapter_id, contract.wire, contract.schema_dialect]
            for adapter_id in adapters
            for contract in [effective_contract(adapter_id)]
        ],
        "settings": {"examples": examples, "seconds": seconds, "fidelity": fidelity},
        "libraries": {name: _installed(name) for name in LIBRARIES},
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
    }


def _relative(path: Path) -> str:
    try:
        return path.resolve().relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def key_of(parts: dict[str, Any]) -> str:
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def changed(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What differs between two key parts, shortly ("code: adapters/schema/_unions.py")."""
    said: list[str] = []
    for part in sorted(set(old) | set(new)):
        before, after = old.get(part), new.get(part)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict) and part in ("corpus", "code", "libraries"):
            names = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            said.append(f"{part}: {shown}")
        else:
            said.append(part)
    return "; ".join(said) or "nothing"


def measure_default(corpus: Path, adapters: Sequence[str], *, examples: int, seconds: float) -> list[Any]:
    """The measurement behind the default report (every adapter x the corpus, with fidelity)."""
    from xpeval.evals.acceptance.measure import default_workers, measure_corpus

    return list(
        measure_corpus(
            corpus, adapters, examples=examples, seconds=seconds, fidelity=True, workers=default_workers()
        )
    )


def _stderr(line: str) -> None:
    print(f"xpeval: {line}", file=sys.stderr, flush=True)


def ensure_report(
    reports_dir: Path,
    corpus: Path,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seconds: float = DEFAULT_SECONDS,
    log: Callable[[str], None] | None = None,
) -> tuple[Path, bool]:
    """reports_dir/schema_acceptance.{csv,md} for every registered adapter over `corpus`: measured
    only when its key changed. Returns (md path, measured now); says which on `log` (stderr)."""
    from xpeval.evals.acceptance.table import pairs_frame, write_acceptance_report

    say = log or _stderr
    adapters = adapter_ids()
    parts = key_parts(corpus, adapters=adapters, examples=examples, seconds=seconds, fidelity=True)
    key = key_of(parts)
    paths = {"csv": reports_dir / "schema_acceptance.csv", "md": reports_dir / "schema_acceptance.md"}
    key_path = reports_dir / KEY_FILE
    stored = _stored(key_path)
    if stored.get("key") == key and _reports_match(paths, stored.get("reports")):
        say(f"schema acceptance: {paths['md']} is current (key {key[:12]}): not measured again")
        return paths["md"], False
    if stored.get("parts"):
        reason = f"changed since the last report: {changed(stored['parts'], parts)}"
        if stored.get("key") == key:
            reason = "the report files were changed or removed since they were written"
    else:
        reason = "no key of an earlier report"
    say(f"schema acceptance: measuring ({reason})")
    rows = measure_default(corpus, adapters, examples=examples, seconds=seconds)
    written = write_acceptance_report(
        pairs_frame(rows), reports_dir, str(corpus), measured_by="xpeval run --schema-report"
    )
    record = {"key": key, "reports": {kind: _digest(path) for kind, path in written.items()}, "parts": parts}
    _write_atomically(key_path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return written["md"], True


def _stored(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _reports_match(paths: dict[str, Path], digests: Any) -> bool:
    if not isinstance(digests, dict):
        return False
    try:
        return all(digests.get(kind) == _digest(path) for kind, path in paths.items())
    except OSError:
        return False


def _write_atomically(path: Path, text: str) -> None:
    # a run stopped mid-write must not leave a key that matches a report it does not describe
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
