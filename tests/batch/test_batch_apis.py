"""Which wires have a Batch API (each `WirePlugin` says), and what Bedrock's needs before a live
run asks it (docs/batch.md)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from xpeval.adapters.wires.batch import batch_api, batch_api_of, batch_apis
from xpeval.adapters.wires.catalog import WirePlugin, wire_problem
from xpeval.bundled import bedrock_batch
from xpeval.bundled.bedrock_converse import BedrockConverse
from xpeval.errors import WireError


def test_every_batch_api_is_named_by_its_wire_and_bedrock_by_its_bundled_plugin() -> None:
    assert [api.name for api in batch_apis()] == ["openai", "anthropic", "gemini", "bedrock"]
    assert batch_api_of("bedrock-converse") is bedrock_batch.API
    assert batch_api_of("mistral-chat") is None  # a wire without one plays online
    with pytest.raises(ValueError, match="no Batch API called 'acme'"):
        batch_api("acme")


def test_a_wire_naming_its_batch_api_wrongly_is_refused_in_one_line() -> None:
    class AcmeConverse(BedrockConverse):
        name = "acme-converse"

    wrong = WirePlugin(codec=AcmeConverse(), batch_api="acme_xpeval.batch.API")

    assert (
        wire_problem(wrong)
        == "wire acme-converse: batch_api must be 'module:ATTR', not 'acme_xpeval.batch.API'"
    )
    assert wire_problem(dataclasses.replace(wrong, batch_api="acme_xpeval.batch:API")) is None


def test_a_batch_api_that_cannot_be_imported_is_a_wire_error_naming_it() -> None:
    from xpeval.adapters.wires.batch import _load

    with pytest.raises(WireError, match=r"Batch API acme_missing\.batch:API: cannot be imported"):
        _load("acme_missing.batch:API")
    with pytest.raises(WireError, match="lacks name and limits"):
        _load("xpeval.bundled.bedrock_batch:MIN_RECORDS")


def test_a_live_bedrock_batch_run_without_its_role_and_bucket_is_refused_naming_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("XPEVAL_BEDROCK_BATCH_ROLE_ARN", raising=False)
    monkeypatch.delenv("XPEVAL_BEDROCK_BATCH_S3_URI", raising=False)
    api = bedrock_batch.API

    problem = api.unusable(emulated=False)

    assert problem is not None and "\n" not in problem
    assert "XPEVAL_BEDROCK_BATCH_ROLE_ARN and XPEVAL_BEDROCK_BATCH_S3_URI" in problem
    assert api.unusable(emulated=True) is None  # the emulator's defaults
    monkeypatch.setenv("XPEVAL_BEDROCK_BATCH_ROLE_ARN", "arn:aws:iam::123456789012:role/batch")
    monkeypatch.setenv("XPEVAL_BEDROCK_BATCH_S3_URI", "https://example.com/bucket")
    assert "is not an S3 location" in str(api.unusable(emulated=False))


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", 100),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 100),  # through an inference profile
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", 100),
        ("emulated.converse-v1:0", 1),  # not in the table: Bedrock itself refuses a job too small
    ],
)
def test_bedrocks_minimum_record_count_is_its_models(model: str, minimum: int) -> None:
    assert bedrock_batch.API.limits.minimum(model) == minimum


def test_bedrocks_output_lines_are_answers_by_record_id() -> None:
    answered = bedrock_batch._answer(
        {"recordId": "x1", "modelInput": {}, "modelOutput": {"stopReason": "end_turn"}}
    )
    refused = bedrock_batch._answer(
        {
            "recordId": "x2",
            "modelInput": {},
            "error": {"errorCode": 400, "errorMessage": "toolConfig unsupported"},
        }
    )

    assert (answered.custom_id, answered.outcome, answered.status) == ("x1", "succeeded", 200)
    assert (refused.custom_id, refused.outcome, refused.status) == ("x2", "errored", 400)
    assert refused.message == "toolConfig unsupported" and refused.body is not None
    assert re.search(rb'"message": "toolConfig unsupported"', refused.body)


def test_a_live_bedrock_batch_of_episodes_offering_tools_is_refused_before_anything_is_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Bedrock's Converse jobs fail every record that offers tools (docs/batch.md): a live run
    # would pay for a job whose every answer is an error. Settings and credentials are all there,
    # so the tools are the only reason; nothing may be captured, uploaded or created.
    for name, value in {
        "AWS_ACCESS_KEY_ID": "AKIAXPEVALTESTONLY00",
        "AWS_SECRET_ACCESS_KEY": "xpeval-test-only",
        "AWS_DEFAULT_REGION": "us-east-1",
        "XPEVAL_BEDROCK_BATCH_ROLE_ARN": "arn:aws:iam::123456789012:role/batch",
        "XPEVAL_BEDROCK_BATCH_S3_URI": "s3://xpeval-batch/runs",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    from xpeval.evals.cli import main

    code = main(["run", "--mode", "live", "--batch", "--adapters", "bedrock-converse", "--cases", "calc_*"])

    refusal = [line for line in capsys.readouterr().err.splitlines() if line.startswith("xpeval: --batch:")]
    assert code == 2
    assert refusal == [
        "xpeval: --batch: bedrock's batch jobs take no tool calls, and 8 episodes of bedrock-converse "
        "offer tools (docs/batch.md); run them without --batch"
    ]
    assert not list(tmp_path.glob("cassettes/**/*.yaml"))


def test_every_batch_api_but_bedrocks_takes_requests_offering_tools() -> None:
    assert {api.name: api.limits.tools for api in batch_apis()} == {
        "openai": True,
        "anthropic": True,
        "gemini": True,
        "bedrock": False,
    }
