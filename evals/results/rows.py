"""A results row and the records around it: what one attempt of one episode left behind.

`ResultRow` is one attempt (the calls the model made, the verdict, its source); `RunHeader` opens
a results file (the run's configuration and plan) and `RunTrailer` closes it (its counts).
`bounded(row)` keeps every row small whatever a model answered (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from xpeval.evals.results.run_plan import RunPlan, episode_id

RowSource = Literal["live", "cassette", "local-model", "emulated"]
"""Where a number comes from: a live provider; a cassette recorded live (model and date in the
row); the local model (live or replayed from its recording); the emulator (pipeline only)."""

REPLAYED_SOURCE: dict[str, RowSource] = {
    "live": "cassette",
    "local-model": "local-model",
    "emulated": "emulated",
}
"""A replayed row's source from what its cassette was recorded against (`CassetteMeta.source`):
a live recording is `cassette`, the others keep their name. The runner labels rows by it and
the gate checks a replay's rows against it."""

EpisodeKey = tuple[str, str, str]
"""(episode id, adapter id, model): the episode id is the case id, `@trial` for later trials."""


class CallRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turn: int
    id: str | None
    name: str
    arguments: dict[str, Any]
    parse_error: str | None = None
    schema_valid: bool | None = None
    """Whether the arguments are valid for the tool's original JSON Schema; None: not judged
    (`xpeval.evals.verdict.argument_validity`)."""
    schema_error: str | None = None
    """The first violation when invalid, or why the call was not judged."""


MAX_VALUE_BYTES = 4096
"""What a row keeps of one argument value, a text or an error message; the rest is replaced by
its length and sha256 (a model that answers 5 MB must not make every row 5 MB)."""
MAX_CALL_BYTES = 4 * MAX_VALUE_BYTES
"""What a row keeps of one call's arguments together."""
MAX_NAME_BYTES = 512
"""What a row keeps of a call's tool name and id (no provider accepts a tool name this long, so a
cut name never names a case's tool)."""
MAX_ROW_CALLS = 256
"""Most calls a row keeps (an episode of a handful of turns makes far fewer): the first ones,
the rest counted in `dropped_calls` (a model that answers 300,000 calls must not make a 50 MB row)."""
MAX_ROW_SAID = 64
"""Most agent texts a task row keeps (`said`): the first ones; the rest are one `truncated` note."""
MAX_ROW_BYTES = 1024 * 1024
"""Most bytes of a row's line in a results file: past it the row keeps fewer calls (the first
ones that fit), so every row the writer writes fits the readers' block
(`xpeval.evals.results.load.BLOCK_BYTES`, twice this)."""
RESERVED_CALL_BYTES = 2048
"""Room left per kept call for what is judged after the bound (its `schema_valid` and its
`schema_error`, at most `argument_validity.MAX_REASON` characters, each up to 6 bytes as JSON)."""
RESERVED_ROW_BYTES = 8 * MAX_VALUE_BYTES
"""Room left for the row's verdict and its reason, set from its kept calls after the bound."""


class Truncation(BaseModel):
    """A value a row does not keep whole: where it was, its size and its hash."""

    model_config = ConfigDict(extra="forbid")

    field: str
    bytes: int
    sha256: str


class ResultRow(BaseModel):
    """One attempt at one case through one adapter and model."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["result"] = "result"
    run: str
    case_id: str
    trial: int = 0
    """Which repetition of the case this is (`--repeat`)."""
    category: str
    adapter: str
    wire: str
    model: str
    attempt: int
    final: bool
    """The last attempt for this episode (success, a non-retryable failure, or retries spent)."""
    source: RowSource
    recorded_at: str | None = None
    """For cassette, local-model and emulated rows replayed from a recording: when it was made."""
    recorded_model: str | None = None
    correct: bool | None
    """None: an unlabelled case (judged against a reference row only); so is tool selection."""
    tool_selection_correct: bool | None
    arguments_correct: bool | None
    irrelevance: bool
    malformed: bool
    schema_valid: bool | None = None
    """Every returned call's arguments valid for its tool's schema; None: no call, an error, or a
    call that could not be judged (`xpeval.evals.verdict.argument_validity`)."""
    reason: str | None = None
    calls: list[CallRecord] = Field(default_factory=list)
    error_kind: str | None = None
    """ProviderError.kind, or "cassette" (a replay problem: a conformance failure) or "runner"."""
    error_type: str | None = None
    error_status: int | None = None
    error_message: str | None = None
    latency_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    """Of `input_tokens` (which counts every input token), those read from the provider's prompt
    cache, where its wire reports them."""
    cache_write_tokens: int | None = None
    """Of `input_tokens`, those written to the provider's prompt cache."""
    cost_usd: float | None = None
    """What the episode's tokens cost at the model's published price; None when unknown."""
    steps: int = 1
    started_at: str
    text: str | None = None
    """The model's last visible text in the episode."""
    refusal: str | None = None
    """The model's refusal, when it refused (scored as no call)."""
    truncated: list[Truncation] = Field(default_factory=list)
    """Values cut to `MAX_VALUE_BYTES`: each keeps its first bytes, its length and its sha256."""
    batch: str | None = None
    """The batch that answered this episode (`xpeval run --batch`: its id in the file's batch
    records), or "recorded" when replayed from a batch recording; None: asked online."""
    dropped_calls: int = Field(default=0, ge=0)
    """Calls the answer had past the first ones the row keeps (`MAX_ROW_CALLS`, `MAX_ROW_BYTES`):
    counted, not kept. A row that dropped calls is never scored correct (what they were is gone)."""
    said: list[str] | None = None
    """A task case: the agent's texts to the user, in order, each cut to `MAX_VALUE_BYTES`, at
    most `MAX_ROW_SAID` of them; the task's reward searches them (`xpeval.evals.verdict.task_reward`)."""
    ended: str | None = None
    """A task case: how its conversation ended (`user_stop`, `max_turns`, `max_steps`, `error`)."""

    @property
    def key(self) -> EpisodeKey:
        return (episode_id(self.case_id, self.trial), self.adapter, self.model)


class RunHeader(BaseModel):
    """The first line of a results file: which run it is and every episode it plans."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["run"] = "run"
    run: str
    fingerprint: str
    started_at: str
    config: dict[str, Any]
    plan: RunPlan | None = None
    """Every planned episode: a run is complete only when each has a final row."""


class RunTrailer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["complete"] = "complete"
    run: str
    finished_at: str
    rows: int


def _cut(text: str, field: str, notes: list[Truncation], limit: int = MAX_VALUE_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    digest = hashlib.sha256(data).hexdigest()
    notes.append(Truncation(field=field, bytes=len(data), sha256=digest))
    kept = data[:limit].decode("utf-8", errors="ignore")
    return f"{kept}... [truncated: {len(data)} bytes, sha256 {digest}]"


def _bounded_arguments(arguments: dict[str, Any], where: str, notes: list[Truncation]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mine: list[Truncation] = []
    for name, value in arguments.items():
        if isinstance(value, str):
            out[name] = _cut(value, f"{where}.{name}", mine)
            continue
        text = json.dumps(value, ensure_ascii=False, default=str)
        out[name] = value if len(text) <= MAX_VALUE_BYTES else _cut(text, f"{where}.{name}", mine)
    whole = json.dumps(out, ensure_ascii=False, default=str)
    if len(whole.encode("utf-8")) > MAX_CALL_BYTES:
        # One note for the whole (the values' own notes would name every key of a huge object).
        whole = json.dumps(arguments, ensure_ascii=False, default=str)
        return {"<arguments>": _cut(whole, where, notes, MAX_CALL_BYTES)}
    notes.extend(mine)
    return out


def _line_bytes(value: dict[str, Any]) -> int:
    """The bytes `value` takes in a results file (as `ResultsFile` writes it)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8"))


def _bounded_call(call: CallRecord, index: int) -> tuple[CallRecord, list[Truncation]]:
    notes: list[Truncation] = []
    where = f"calls[{index}]"
    update: dict[str, Any] = {
        "name": _cut(call.name, f"{where}.name", notes, MAX_NAME_BYTES),
        "arguments": _bounded_arguments(call.arguments, f"{where}.arguments", notes),
    }
    if call.id is not None:
        update["id"] = _cut(call.id, f"{where}.id", notes, MAX_NAME_BYTES)
    if call.parse_error:
        update["parse_error"] = _cut(call.parse_error, f"{where}.parse_error", notes)
    return call.model_copy(update=update), notes


def bounded(row: ResultRow) -> ResultRow:
    """The row with every argument value, text and message cut to `MAX_VALUE_BYTES` (the cuts
    listed in `truncated`), and its calls the first ones within `MAX_ROW_CALLS` and
    `MAX_ROW_BYTES` (the rest counted in `dropped_calls`): memory and results files stay flat
    however much a model sends, and every row fits the readers' block."""
    notes: list[Truncation] = []
    update: dict[str, Any] = {}
    for name in ("text", "refusal", "reason", "error_message"):
        value = getattr(row, name)
        if isinstance(value, str):
            update[name] = _cut(value, name, notes)
    if row.said is not None:
        update["said"] = _bounded_said(row.said, notes)
    base = row.model_copy(update={**update, "calls": [], "truncated": [*row.truncated, *notes]})
    room = MAX_ROW_BYTES - RESERVED_ROW_BYTES - _line_bytes(base.model_dump(mode="json"))
    calls: list[CallRecord] = []
    for index, call in enumerate(row.calls[:MAX_ROW_CALLS]):
        kept, call_notes = _bounded_call(call, index)
        size = _line_bytes(kept.model_dump(mode="json")) + RESERVED_CALL_BYTES
        size += sum(_line_bytes(note.model_dump()) + 1 for note in call_notes)
        if size > room:
            break
        room -= size
        calls.append(kept)
        notes.extend(call_notes)
    dropped = row.dropped_calls + len(row.calls) - len(calls)
    if not notes and not dropped:
        return row
    return row.model_copy(
        update={**update, "calls": calls, "truncated": [*row.truncated, *notes], "dropped_calls": dropped}
    )


def _bounded_said(said: list[str], notes: list[Truncation]) -> list[str]:
    """A task row's agent texts: the first `MAX_ROW_SAID`, each cut to `MAX_VALUE_BYTES`."""
    kept = [_cut(text, f"said[{index}]", notes) for index, text in enumerate(said[:MAX_ROW_SAID])]
    if len(said) > MAX_ROW_SAID:
        rest = "\n".join(said[MAX_ROW_SAID:]).encode("utf-8")
        notes.append(
            Truncation(
                field=f"said[{MAX_ROW_SAID}:]", bytes=len(rest), sha256=hashlib.sha256(rest).hexdigest()
            )
        )
    return kept


def with_text(row: ResultRow, field: str, value: str | None) -> ResultRow:
    """The row with a text field (`reason`, ...) set to `value` cut to `MAX_VALUE_BYTES` (the cut
    listed in `truncated`): for what is set after the bound (`RESERVED_ROW_BYTES` holds it)."""
    notes: list[Truncation] = []
    text = _cut(value, field, notes) if value is not None else None
    return row.model_copy(update={field: text, "truncated": [*row.truncated, *notes]})


def stored_turns(calls: Sequence[CallRecord]) -> list[list[dict[str, Any]]]:
    """A row's kept calls per turn, as the scorer reads them (`name`, `arguments`, `parse_error`):
    what the runner scores a row from and the gate scores it again from."""
    turns: list[list[dict[str, Any]]] = []
    for call in calls:
        while len(turns) <= call.turn:
            turns.append([])
        turns[call.turn].append(
            {"name": call.name, "arguments": call.arguments, "parse_error": call.parse_error}
        )
    return turns


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


RUN_NONCE_BYTES = 4
"""Random bytes in a run id: two runs of one configuration started in the same second (two CI
jobs, a retried job) still get two ids, so neither replaces the other in the history store."""


def new_run_id(started_at: str, fingerprint: str) -> str:
    """A new run's id: its start time first (ids sort as runs started, and read as a date), its
    settings' fingerprint, then a random nonce (the start second alone is not unique)."""
    return f"{started_at}-{fingerprint[:8]}-{secrets.token_hex(RUN_NONCE_BYTES)}"


def merged_run_id(started_at: str, fingerprint: str, parts: Sequence[str]) -> str:
    """The id of a run made of the runs `parts` (the shards `xpeval merge` joins): like a new
    run's, with a digest of the parts' ids for its nonce, so merging the same shards again gives
    the same id and merging other shards another."""
    digest = hashlib.sha256("\n".join(sorted(parts)).encode("utf-8")).hexdigest()
    return f"{started_at}-{fingerprint[:8]}-{digest[: 2 * RUN_NONCE_BYTES]}"


def settings_fingerprint(config: dict[str, Any]) -> str:
    """A stable identity for a run's configuration (what must match to resume it)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
