"""Where cassettes live: `<root>/<adapter>/<model>/<case>.yaml`, one per (adapter, model, case).

The model is a folder because one adapter is measured with several models (the local
model's two sizes, a provider's current and next model). A model name may hold characters a
file name cannot (`meta-llama/Llama-3`): the folder is its percent-encoding, decoded back exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

from pydantic import ValidationError

from xpeval.errors import CassetteError
from xpeval.evals.cassettes.cassette import load_recording
from xpeval.evals.cassettes.meta import META_KEY, CassetteMeta, Source

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

    def path(self, adapter_id: str, episode_id: str, model: str) -> Path:
        """Where an episode's cassette lives; its id is the case's, `@<trial>` after the first."""
        return (
            self.root
            / _checked_name("adapter", adapter_id)
            / model_folder(model)
            / f"{_checked_name('case', episode_id)}{SUFFIX}"
        )

    def models(self, adapter_id: str) -> list[str]:
        """The models an adapter has cassettes for, in name order."""
        folder = self.root / _checked_name("adapter", adapter_id)
        if not folder.is_dir():
            return []
        return sorted(unquote(p.name) for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))

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

    def sources_of(self, adapter_id: str, model: str | None) -> set[Source]:
        """Where an adapter's recordings of `model` came from (any model's when it has none):
        the target a new case's recording hint names, so it runs where the others were made.
        Unreadable recordings are skipped: they say nothing about the others."""
        folders = [self.root / _checked_name("adapter", adapter_id) / model_folder(model)] if model else []
        folders.append(self.root / _checked_name("adapter", adapter_id))
        for folder in folders:
            found: set[Source] = set()
            for path in sorted(folder.rglob(f"*{SUFFIX}")) if folder.is_dir() else []:
                try:
                    meta = self.meta(path)
                except CassetteError:
                    continue
                if meta is not None:
                    found.add(meta.source)
            if found:
                return found
        return set()

    def iter_cassettes(self) -> Iterator[tuple[str, str, str, Path]]:
        """(adapter, model, case, path) for every cassette under the root, in path order."""
        if not self.root.is_dir():
            return
        for folder in _subfolders(self.root):
            for model in _subfolders(folder):
                for path in sorted(model.glob(f"*{SUFFIX}")):
                    if not path.name.startswith("."):
                        yield folder.name, unquote(model.name), path.name[: -len(SUFFIX)], path


def model_folder(model: str) -> str:
    """The folder name of a model: its percent-encoding (reversible, one path component)."""
    if not model or model != model.strip():
        raise CassetteError(f"model {model!r} cannot name a cassette folder")
    folder = quote(model, safe="-._~+@")
    # A leading dot would hide the folder (and ".." would leave the adapter's): encode it.
    return "%2E" + folder[1:] if folder.startswith(".") else folder


def _subfolders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
