"""vcrpy's Cassette with an indexed lookup, a cache of parsed files, and atomic saves.

vcrpy's own Cassette re-reads the YAML for every test and scans every recorded request for
each lookup. This one keeps vcrpy's machinery (record modes, play counts, `all_played`, the
before-record hooks, the file format) and changes only what makes replay cost grow:
- a parsed file is cached by (path, mtime, size) and shared, read-only, by every episode that
  opens it: a changed file is a new key, so an edit is never served stale;
- a request is found through a dict keyed by its canonical request key (`matching`), which is
  exactly the rule vcrpy applies through `VCR_MATCH_ON`.
"""

from __future__ import annotations

import collections
import copy
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from vcr.cassette import Cassette
from vcr.errors import UnhandledHTTPRequestError
from vcr.record_mode import RecordMode
from vcr.request import Request as VcrRequest
from vcr.serialize import serialize
from vcr.serializers import yamlserializer

from xpeval.errors import CassetteError
from xpeval.evals.cassettes.format import Interaction, load_interactions, read_document
from xpeval.evals.cassettes.matching import VCR_MATCH_ON, RequestKey, request_key
from xpeval.evals.project import input_limits
from xpeval.evals.scrub import Scrubber
from xpeval.evals.untrusted import InputLimits

_KEY_ATTRIBUTE = "_xpeval_request_key"


@dataclass(frozen=True)
class Recording:
    """A cassette file as parsed once: interactions in vcrpy's in-memory shape, and their keys."""

    pairs: tuple[tuple[VcrRequest, dict[str, Any]], ...]
    keys: tuple[RequestKey, ...]
    index: dict[RequestKey, tuple[int, ...]]
    metadata: dict[str, Any] = field(default_factory=dict)
    exact: dict[tuple[str, str, bytes | None], RequestKey] = field(default_factory=dict)
    """Each recorded (method, URI, body) as recorded, with its key: a request sent exactly as
    recorded (a replay's every request, unless the adapter drifted) has that key without its
    body being parsed and serialized again (`request_key` is a function of these three)."""


def _vcr_pair(interaction: Interaction) -> tuple[VcrRequest, dict[str, Any]]:
    request = VcrRequest(
        interaction.method,
        interaction.uri,
        interaction.request_body,
        {k: v[0] for k, v in interaction.request_headers.items() if v},
    )
    response = {
        "status": {"code": interaction.status, "message": interaction.reason},
        "headers": dict(interaction.response_headers),
        "body": {"string": interaction.response_body},
    }
    return request, response


def recording_from_document(document: Any, source: str, limits: InputLimits | None = None) -> Recording:
    """Any of the three body forms (text, gzip `!!binary`, `parsed_body`), bodies decompressed
    within `limits` (default: the project's)."""
    interactions = load_interactions(document, source, limits)
    pairs = tuple(_vcr_pair(i) for i in interactions)
    keys = tuple(request_key(i.method, i.uri, i.request_body) for i in interactions)
    index: dict[RequestKey, list[int]] = {}
    for position, key in enumerate(keys):
        index.setdefault(key, []).append(position)
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return Recording(
        pairs=pairs,
        keys=keys,
        index={k: tuple(v) for k, v in index.items()},
        metadata=dict(metadata) if isinstance(metadata, dict) else {},
        exact={(i.method, i.uri, i.request_body): key for i, key in zip(interactions, keys, strict=True)},
    )


@lru_cache(maxsize=4096)
def _parse(path: str, mtime_ns: int, size: int, limits: InputLimits) -> Recording:
    file = Path(path)
    return recording_from_document(read_document(file, limits), str(file), limits)


def load_recording(path: Path, limits: InputLimits | None = None) -> Recording | None:
    """The parsed cassette at `path` (cached while the file is unchanged), None when absent.

    A file that exists but cannot be read or parsed, or is beyond `limits` (default: the
    project's), raises CassetteError naming it.
    """
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read cassette: {exc.strerror or exc}") from exc
    return _parse(str(path), stat.st_mtime_ns, stat.st_size, limits or input_limits())


class AtomicPersister:
    """vcrpy persister that writes a cassette to a temporary file and renames it into place.

    A crash or a full disk leaves either the old cassette or the new one, never half of one.
    """

    @staticmethod
    def load_cassette(
        cassette_path: str | Path, serializer: Any
    ) -> tuple[list[Any], list[Any], dict[str, Any]]:
        recording = load_recording(Path(cassette_path))
        if recording is None:
            from vcr.persisters.filesystem import CassetteNotFoundError

            raise CassetteNotFoundError()
        requests = [request for request, _ in recording.pairs]
        responses = [copy.deepcopy(response) for _, response in recording.pairs]
        return requests, responses, dict(recording.metadata)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
        path = Path(cassette_path)
        # vcrpy's serializer converts response bodies in place: give it copies.
        cassette_dict = {**cassette_dict, "responses": copy.deepcopy(cassette_dict["responses"])}
        text = serialize(cassette_dict, serializer)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


class IndexedCassette(Cassette):  # type: ignore[misc]  # vcrpy ships no type information
    """A vcrpy Cassette whose lookups go through a dict of canonical request keys.

    Loaded interactions come from a shared `Recording` (never mutated); interactions recorded
    now are scrubbed, kept and indexed here. `sequence` lists the interactions this episode
    used, in order: played ones and newly recorded ones.
    """

    def __init__(
        self,
        path: Path,
        *,
        record_mode: RecordMode,
        scrubber: Scrubber,
        recording: Recording | None = None,
    ) -> None:
        super().__init__(
            str(path),
            serializer=yamlserializer,
            persister=AtomicPersister,
            record_mode=record_mode,
            match_on=VCR_MATCH_ON,
            before_record_request=scrubber.request,
            before_record_response=scrubber.response,
            allow_playback_repeats=False,
        )
        self._scrubber = scrubber
        self._loaded_index: dict[RequestKey, tuple[int, ...]] = {}
        self._new_index: dict[RequestKey, list[int]] = {}
        self._exact: dict[tuple[str, str, bytes | None], RequestKey] = {}
        self.keys: list[RequestKey] = []
        self.sequence: list[int] = []
        if recording is not None:
            self.data = list(recording.pairs)
            self.keys = list(recording.keys)
            self._loaded_index = recording.index
            self._exact = recording.exact
            self._old_interactions = list(recording.pairs)
            self._loaded_count = len(recording.pairs)
            self._metadata = dict(recording.metadata)
            self.rewound = True

    # --- lookup -------------------------------------------------------------------------

    def key_of(self, request: VcrRequest) -> RequestKey:
        """The canonical key of a request as it would be recorded (scrubbed), computed once."""
        key: RequestKey | None = getattr(request, _KEY_ATTRIBUTE, None)
        if key is None:
            body = request.body
            if self._scrubber.has_secrets:
                body = self._scrubber.body(body)
            uri = self._scrubber.line(request.uri)
            key = self._exact.get((request.method, uri, body)) or request_key(request.method, uri, body)
            setattr(request, _KEY_ATTRIBUTE, key)
        return key

    def _positions(self, key: RequestKey) -> Iterator[int]:
        yield from self._loaded_index.get(key, ())
        yield from self._new_index.get(key, ())

    def _unplayed(self, request: VcrRequest) -> int | None:
        for position in self._positions(self.key_of(request)):
            if self.play_counts[position] == 0:
                return position
        return None

    def __contains__(self, request: VcrRequest) -> bool:
        return self._unplayed(request) is not None

    def can_play_response_for(self, request: VcrRequest) -> bool:
        return (
            self.record_mode != RecordMode.ALL
            and (self.rewound or self.allow_playback_repeats)
            and self._unplayed(request) is not None
        )

    def play_response(self, request: VcrRequest) -> dict[str, Any]:
        position = self._unplayed(request)
        if position is None:
            raise UnhandledHTTPRequestError(f"{self._path}: no unplayed recorded match for {request!r}")
        self.play_counts[position] += 1
        self.sequence.append(position)
        return self.data[position][1]

    # --- recording ----------------------------------------------------------------------

    def append(self, request: VcrRequest, response: dict[str, Any]) -> None:
        """Keep a newly recorded interaction, scrubbed (no logging: the raw pair holds secrets)."""
        scrubbed_request = self._before_record_request(request)
        scrubbed_response = self._before_record_response(copy.deepcopy(response))
        if not scrubbed_request or scrubbed_response is None:
            return
        key = self.key_of(request)
        self.data.append((scrubbed_request, scrubbed_response))
        self.keys.append(key)
        self._new_index.setdefault(key, []).append(len(self.data) - 1)
        self.sequence.append(len(self.data) - 1)
        self.dirty = True

    def rewind(self) -> None:
        """Start the episode over after a failed attempt: every interaction can be played again
        and none counts as used, so only the final attempt's interactions are saved. The failed
        attempt's last new recording is forgotten: it may be the fault itself (a 503 replayed to
        the retry would fail it again)."""
        if self.sequence and self.sequence[-1] >= self._loaded_count:
            last = self.sequence[-1]
            self._new_index[self.keys[last]].remove(last)
        self.play_counts: collections.Counter[int] = collections.Counter()
        self.sequence = []
        self.rewound = True  # vcrpy replays only from a rewound cassette

    def unplayed_positions(self) -> list[int]:
        return [i for i in range(self._loaded_count) if self.play_counts[i] == 0]

    def used(self) -> Sequence[int]:
        return self.sequence

    @property
    def loaded_count(self) -> int:
        return self._loaded_count

    def save_interactions(self, positions: Sequence[int], metadata: dict[str, Any]) -> None:
        """Write exactly these interactions, in this order, with this metadata (atomically)."""
        self._metadata = metadata
        self._persist(
            {
                "requests": [self.data[i][0] for i in positions],
                "responses": [self.data[i][1] for i in positions],
            }
        )
        self.dirty = False
