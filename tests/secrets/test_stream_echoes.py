"""An echo of a secret split across a stream's frames: scrubbed in the text the frames spell,
and what is left mapped back so that no frame keeps a piece of it — on each wire's own framing
(its renderer's bytes), on a stream cut in the middle of the echo, and at any split points."""

from __future__ import annotations

import itertools
import json
import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.adapters.wires import get_wire
from xpeval.evals.scrub import PIECE, PLACEHOLDER, Scrubber
from xpeval.evals.stream_frames import StreamBody

SECRET = f"sk-test-{secrets.token_hex(16)}"
"""A key made up per test session (no credential-like literal lives in the repository)."""
DIRECT = ("openai-chat", "openai-responses", "anthropic-messages", "google-genai")


def pieces(secret: str = SECRET) -> set[str]:
    return {secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)}


def scrubbed(body: bytes) -> bytes:
    scrubber = Scrubber([SECRET])
    return scrubber.data(scrubber.stream(body))


def echo() -> TurnResult:
    call = ToolCall(id="call_1", name="note", arguments={"text": f"keep {SECRET} safe"})
    return TurnResult(text=f"Your key is {SECRET}, isn't it?", tool_calls=[call])


@pytest.mark.parametrize("wire", DIRECT)
def test_an_echo_split_by_the_wires_own_framing_leaves_no_piece(wire: str) -> None:
    chunks = get_wire(wire).render(echo(), model="m", stream=True).chunks
    split = [c for c in chunks if SECRET.encode() not in c and any(p.encode() in c for p in pieces())]
    assert split, "the wire's framing really splits the echo across frames"
    body = b"".join(chunks)
    out = scrubbed(body).decode()
    assert [piece for piece in pieces() if piece in out] == []
    frames = StreamBody.parse(out.encode())
    assert frames is not None and len(frames.documents) == len(StreamBody.parse(body).documents)  # type: ignore[union-attr]
    spelled = {path: "".join(f.text for f in fragments) for path, fragments in frames.channels().items()}
    assert any(f"Your key is {PLACEHOLDER}, isn't it?" in text for text in spelled.values())


@pytest.mark.parametrize("wire", DIRECT)
def test_a_stream_cut_in_the_middle_of_an_echo_keeps_no_piece_of_it(wire: str) -> None:
    rendered = get_wire(wire).render(TurnResult(text=f"Key: {SECRET} end"), model="m", stream=True)
    frames = rendered.chunks
    cut = next(i for i, frame in enumerate(frames) if any(p.encode() in frame for p in pieces())) + 1
    body = b"".join(frames[:cut])
    assert SECRET.encode() not in body
    out = scrubbed(body).decode()
    assert [piece for piece in pieces() if piece in out] == []


def frames_of(text: str, cuts: list[int]) -> bytes:
    bounds = [0, *sorted(set(cuts)), len(text)]
    pieces_of_text = [text[a:b] for a, b in itertools.pairwise(bounds)]
    return b"".join(
        b"data: " + json.dumps({"id": "x", "delta": {"content": piece}}).encode() + b"\n\n"
        for piece in pieces_of_text
    )


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(alphabet="abc XYZ.,", max_size=30),
    after=st.text(alphabet="abc XYZ.,", max_size=30),
    cuts=st.lists(st.integers(0, 120), max_size=8),
)
def test_at_any_split_points_the_frames_spell_the_text_with_one_placeholder(
    before: str, after: str, cuts: list[int]
) -> None:
    text = f"{before}{SECRET}{after}"
    body = frames_of(text, [c for c in cuts if c <= len(text)])
    out = scrubbed(body)
    frames = [json.loads(frame.removeprefix(b"data: ")) for frame in out.split(b"\n\n") if frame]
    assert "".join(frame["delta"]["content"] for frame in frames) == f"{before}{PLACEHOLDER}{after}"
    assert [piece for piece in pieces() if piece in out.decode()] == []


def test_text_that_shares_no_piece_with_a_secret_keeps_its_frames_byte_for_byte() -> None:
    body = frames_of("Converting 26.2 miles to kilometres for you now.", [5, 17, 30])
    assert Scrubber([SECRET]).stream(body) == body


def test_a_credential_word_inside_a_variable_name_makes_its_value_a_secret() -> None:
    """Bedrock's AWS_BEARER_TOKEN_BEDROCK has its credential word in the middle: its value is
    scrubbed from the first recording of a run, before the Bedrock adapter registers it."""
    from xpeval.evals.scrub import environment_secrets

    env = {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-token-123456", "TOKENIZERS_PARALLELISM": "false-but-long"}
    assert environment_secrets(env) == ["bedrock-token-123456"]


def eventstream(texts: list[str], *, corrupt: int | None = None) -> bytes:
    from xpeval.bundled.bedrock_converse import _frame

    frames = [_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in texts]
    if corrupt is not None:
        frames[corrupt] = frames[corrupt][:-1] + bytes([frames[corrupt][-1] ^ 1])
    return b"".join(frames)


def botocore_texts(body: bytes) -> list[str]:
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(body)
    return [json.loads(message.payload)["delta"]["text"] for message in buffer]


def test_an_eventstream_echo_is_scrubbed_across_and_inside_frames_and_botocore_still_reads_it() -> None:
    body = eventstream(["Your key is ", SECRET[:11], f"{SECRET[11:]}, and {SECRET} again"])
    out = scrubbed(body)
    assert [piece for piece in pieces() if piece.encode() in out] == []
    assert "".join(botocore_texts(out)) == f"Your key is {PLACEHOLDER}, and {PLACEHOLDER} again"


def test_an_eventstream_frame_recorded_corrupt_stays_corrupt_once_scrubbed() -> None:
    from botocore.eventstream import ChecksumMismatch

    out = scrubbed(eventstream(["a", f"key {SECRET}"], corrupt=1))
    assert SECRET.encode() not in out
    with pytest.raises(ChecksumMismatch):
        botocore_texts(out)
