"""`xpeval decode` on cassettes that are broken, old-fashioned or mixed with non-provider calls."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests._cli import Cli, Ran

CHAT_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
        }
    ],
}


def decode(cli: Cli, path: Path) -> Ran:
    return cli("decode", "--json", str(path))


def write(tmp_path: Path, document: object, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path


def chat_request() -> dict[str, object]:
    return {
        "method": "POST",
        "uri": "https://api.openai.com/v1/chat/completions",
        "body": json.dumps({"model": "m", "messages": []}),
        "headers": {},
    }


def test_a_malformed_cassette_is_one_clear_line_naming_the_file(cli: Cli, tmp_path: Path) -> None:
    for document in (
        "interactions: [unclosed",
        {"no": "interactions"},
        {"interactions": [{"request": {}, "response": {"status": "x"}}]},
    ):
        path = write(tmp_path, document)
        done = decode(cli, path)
        assert done.returncode == 2
        assert str(path) in done.stderr and "Traceback" not in done.stderr


def test_vcrpys_early_httpx_format_is_read(cli: Cli, tmp_path: Path) -> None:
    old = {
        "interactions": [
            {
                "request": chat_request(),
                "response": {
                    "status_code": 200,
                    "headers": {"content-type": ["application/json"]},
                    "content": json.dumps(CHAT_BODY),
                },
            }
        ]
    }
    done = decode(cli, write(tmp_path, old))
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert row["tool_calls"] == [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}]


def test_non_provider_calls_are_skipped_with_a_note_and_numbering_kept(cli: Cli, tmp_path: Path) -> None:
    token = {
        "request": {
            "method": "POST",
            "uri": "https://oauth2.googleapis.com/token",
            "body": "",
            "headers": {},
        },
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
    }
    chat = {
        "request": chat_request(),
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(CHAT_BODY)},
        },
    }
    done = decode(cli, write(tmp_path, {"interactions": [token, chat]}))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["interaction"] for line in done.stdout.splitlines()] == [1]
    assert "skipped interaction 0" in done.stderr


def test_broken_argument_json_is_shown_with_its_text_and_reason_not_as_empty(
    cli: Cli, tmp_path: Path
) -> None:
    body = json.loads(json.dumps(CHAT_BODY))
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Os'
    chat = {
        "request": chat_request(),
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(body)},
        },
    }
    done = decode(cli, write(tmp_path, {"interactions": [chat]}))
    assert done.returncode == 0, done.stderr
    [call] = json.loads(done.stdout)["tool_calls"]
    assert call["raw_arguments"] == '{"city": "Os' and call["parse_error"]


def _interaction(
    body: object,
    status: int = 200,
    uri: str = "https://api.openai.com/v1/chat/completions",
    request: dict[str, object] | None = None,
) -> dict[str, object]:
    return {
        "request": request or chat_request(),
        "response": {
            "status": {"code": status, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": body if isinstance(body, str) else json.dumps(body)},
        },
    }


def test_a_content_filtered_choice_without_a_message_is_no_call_with_its_finish_reason(
    cli: Cli,
    tmp_path: Path,
) -> None:
    filtered = {
        "id": "chatcmpl-az",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "content_filter",
                "content_filter_results": {"hate": {"filtered": True, "severity": "high"}},
            }
        ],
    }
    path = write(tmp_path, {"interactions": [_interaction(filtered), _interaction(CHAT_BODY)]})
    done = decode(cli, path)
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["tool_calls"] == [] and first["finish_reason"] == "content_filter" and first["text"] is None
    assert second["tool_calls"][0]["name"] == "get_weather", "the file's other interactions are still decoded"


def test_an_undecodable_interaction_is_one_error_line_and_the_others_are_kept(
    cli: Cli, tmp_path: Path
) -> None:
    path = write(
        tmp_path, {"interactions": [_interaction("<html>bad gateway</html>"), _interaction(CHAT_BODY)]}
    )
    done = decode(cli, path)
    assert done.returncode == 1
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(rows) == 2 and "decode_error" in rows[0] and "decode_error" not in rows[1]
    assert "200" in rows[0]["decode_error"] and "bad gateway" in rows[0]["decode_error"]
    assert rows[1]["tool_calls"][0]["arguments"] == {"city": "Oslo"}
    assert "1 of 2 interaction(s) could not be decoded" in done.stderr and "Traceback" not in done.stderr


def test_a_chat_refusal_is_its_own_field_not_text(cli: Cli, tmp_path: Path) -> None:
    refused = json.loads(json.dumps(CHAT_BODY))
    refused["choices"][0]["finish_reason"] = "stop"
    refused["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "refusal": "I can't help with that.",
    }
    done = decode(cli, write(tmp_path, {"interactions": [_interaction(refused)]}))
    row = json.loads(done.stdout)
    assert row["refusal"] == "I can't help with that." and row["text"] is None and row["tool_calls"] == []


def test_a_responses_refusal_part_is_its_own_field_not_text(cli: Cli, tmp_path: Path) -> None:
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-4o",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "I must decline."}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    request: dict[str, object] = {
        "method": "POST",
        "uri": "https://api.openai.com/v1/responses",
        "body": json.dumps({"model": "gpt-4o", "input": "x"}),
        "headers": {},
    }
    done = decode(cli, write(tmp_path, {"interactions": [_interaction(body, request=request)]}))
    row = json.loads(done.stdout)
    assert row["refusal"] == "I must decline." and row["text"] is None


def test_a_refusal_scores_as_no_call() -> None:
    from xpeval.adapters.contract import TurnResult
    from xpeval.evals.cases import load_cases
    from xpeval.evals.verdict.scoring import score

    irrelevant = next(c.case for c in load_cases() if c.case.category == "irrelevance")
    simple = next(c.case for c in load_cases() if c.case.category == "simple")
    refusal = TurnResult(refusal="I can't help with that.")
    assert score(irrelevant, refusal.tool_calls).correct
    assert not score(simple, refusal.tool_calls).correct
