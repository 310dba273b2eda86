"""Where cassettes live: `<root>/<adapter>/<case>.yaml`, one per (adapter, case) episode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from evals.cassettes.cassette import load_recording
from evals.cassettes.format import CassetteError
from evals.cassettes.meta import META_KEY, CassetteMeta

SUFFIX = ".yaml"


def _checked_name(kind: str, value: str) -> str:
    """An adapter or case id usable as one path component (ids come from files and flags)."""
    if not value or value in (".", "..") or any(c in value for c in "/\\\0") or value != value.strip():
        raise CassetteError(f"{kind} id {value!r} cannot name a cassette file")
    return value


class CassetteStore:
    """The cassette folder of a project (by default `cassettes/` in the working directory)."""

    def __init__(self, root: Path = Path("cassettes")) -> None:
        self.root = Path(root)

    def path(self, adapter_id: str, case_id: str) -> Path:
        return self.root / _checked_name("adapter", adapter_id) / f"{_checked_name('case', case_id)}{SUFFIX}"

    def meta(self, path: Path) -> CassetteMeta | None:
        """The cassette's xpeval metadata; None when the file is absent or carries none.

        Metadata that is present but malformed is a CassetteError naming the file.
        """
        recording = load_recording(Path(path))
        if recording is None or META_KEY not in recording.metadata:
            return None
        try:
            return CassetteMeta.model_validate(recording.metadata[META_KEY])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CassetteError(f"{path}: metadata.{META_KEY}.{where}: {first['msg']}") from exc

    def iter_cassettes(self) -> Iterator[tuple[str, str, Path]]:
        """(adapter, case, path) for every cassette under the root, in path order."""
        if not self.root.is_dir():
            return
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            for path in sorted(folder.glob(f"*{SUFFIX}")):
                if not path.name.startswith("."):
                    yield folder.name, path.name[: -len(SUFFIX)], path
